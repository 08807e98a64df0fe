const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes standard, padded base64 and refuses anything else. Node's decoder skips invalid
 * characters silently, which would let two different strings name the same signature.
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // Rejects non-zero padding bits, the last way two strings could decode to the same bytes.
  if (bytes.toString('base64') !== text) return undefined;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
