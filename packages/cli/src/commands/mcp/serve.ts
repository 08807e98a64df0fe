import { Errors } from '@oclif/core';
import { type Failure, RingfenceCommand } from '../../lib/base-command.js';
import { serveFlags } from '../../lib/serve-flags.js';
import { reportServeFailure, runServe } from '../../lib/serve-run.js';

// `bin/run.js` starts `mcp serve` through the bundled fast path (serve-main.ts), which runs this
// same flag parsing and `runServe`, and hands anything else (help, a flag the parser refuses) to
// oclif, which lands here.
export default class McpServe extends RingfenceCommand {
  static override description =
    'Serve every registered server to an AI client as one MCP server: over stdio (default) or streamable HTTP (--http). Reports go to stderr; stdout belongs to the protocol.';

  static override examples = [
    '<%= config.bin %> mcp serve',
    'RINGFENCE_MCP_TOKEN=$(openssl rand -hex 32) <%= config.bin %> mcp serve --http 127.0.0.1:8765',
    '<%= config.bin %> mcp serve --only docs',
  ];

  static override flags = serveFlags;

  async run(): Promise<void> {
    const { flags } = await this.parse(McpServe);
    await runServe(flags);
  }

  protected override failureError(failure: Failure): Error {
    reportServeFailure(failure);
    return new Errors.ExitError(failure.exit);
  }
}
