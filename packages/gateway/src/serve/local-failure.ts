import { isRingfenceError } from '@ringfence/policy';
import type { CallToolResult } from '../ports/caller.js';

/**
 * A failure on this machine (the audit log cannot be written: a full disk, an unwritable home)
 * while a call was being decided. Its decision could not be made durable, so nothing was
 * forwarded; the caller gets that as a tool result the model can read, with the file and the fix
 * that the error already names, instead of a JSON-RPC internal error. Anything else is rethrown.
 */
export function localFailureResult(error: unknown, label: string): CallToolResult {
  if (!isRingfenceError(error) || !error.code.startsWith('AUDIT_')) throw error;
  return {
    content: [
      {
        type: 'text',
        text: `ringfence did not forward ${label}: its decision could not be recorded, so nothing reached the server. ${error.message}`,
      },
    ],
    isError: true,
  };
}
