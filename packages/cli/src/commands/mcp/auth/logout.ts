import { Args } from '@oclif/core';
import { resolveHome } from '@ringfence/gateway/home';
import { OAuthTokenStore, type RevocationOutcome, revokeTokens } from '@ringfence/gateway/remote-auth';
import { RingfenceCommand } from '../../../lib/base-command.js';
import { issuerListedCheck } from '../../../lib/oauth.js';

export default class McpAuthLogout extends RingfenceCommand {
  static override summary = "Revoke a remote server's tokens at its authorization server, then forget them.";

  static override examples = ['<%= config.bin %> mcp auth logout issues'];

  static override enableJsonFlag = true;

  static override args = { name: Args.string({ required: true, description: 'server name' }) };

  async run(): Promise<{ forgotten: boolean } & Partial<RevocationOutcome>> {
    const { args } = await this.parse(McpAuthLogout);
    const store = new OAuthTokenStore(resolveHome());
    const entry = await store.get(args.name);
    if (!entry) {
      this.log(`${args.name} holds no OAuth tokens; nothing to do.`);
      return { forgotten: false };
    }
    // An off-origin revocation endpoint gets the tokens only while the policy lists the issuer.
    const outcome = await revokeTokens(entry, {
      issuerListed: await issuerListedCheck(resolveHome(), args.name),
    });
    await store.forget(args.name);
    if (outcome.revoked.length)
      this.log(
        `Revoked at ${entry.authorization_server.issuer}: ${outcome.revoked.join(', ').replaceAll('_', ' ')}.`,
      );
    if (outcome.not_revocable?.length)
      this.log(
        `Not revocable there: ${outcome.not_revocable.join(', ').replaceAll('_', ' ')} (a self-contained token, valid until it expires).`,
      );
    if (outcome.problem) this.logToStderr(outcome.problem);
    this.log(`Forgot the tokens of ${args.name}. Log in again with: ringfence mcp auth login ${args.name}`);
    return { forgotten: true, ...outcome };
  }
}
