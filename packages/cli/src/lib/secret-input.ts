import { CredentialError } from '@ringfence/gateway/credentials';

/** The largest value read (a PEM key with its chain fits; a runaway pipe does not). */
const MAX_VALUE_BYTES = 64 * 1024;

/**
 * A credential's value from stdin: typed at a terminal with nothing echoed, or piped (one
 * trailing newline dropped). Never from the command line, where the shell's history, `ps` and
 * the audit of whoever runs the command would all keep it.
 */
export async function readSecretValue(
  name: string,
  stdin: NodeJS.ReadStream = process.stdin,
): Promise<string> {
  const value = stdin.isTTY ? await promptHidden(name, stdin) : await readAll(stdin);
  return value.replace(/\r?\n$/, '');
}

async function readAll(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_VALUE_BYTES)
      throw new CredentialError(
        'CREDENTIAL_USAGE',
        `The value on stdin is larger than ${MAX_VALUE_BYTES} bytes; nothing was stored.`,
      );
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Raw mode, so the terminal does not echo; the prompt goes to stderr (stdout stays for results). */
function promptHidden(name: string, stdin: NodeJS.ReadStream): Promise<string> {
  process.stderr.write(`Value for ${name} (not shown; Enter to finish): `);
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done();
        if (char === '\u0003')
          return done(new CredentialError('CREDENTIAL_USAGE', 'Interrupted; nothing was stored.'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
