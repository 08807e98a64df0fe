// Every report line of `mcp serve` that carries a server's words, over random hostile text: the
// line as printed (after the CLI's last guard, `guardedLine`) is what the gateway built (nothing
// was left for the guard to render), it decodes by the reading rule of docs/untrusted-text.md to
// exactly the line with the server's text as it came (rendered once: never twice, never not at
// all), and names show spaces escaped.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { PinStore } from '../pins/store.js';
import { FakeUpstream } from '../ports/__fixtures__/fake-upstream.js';
import type { SchemaChecks } from '../ports/schema.js';
import { hostileText } from '../text/__fixtures__/hostile-text.js';
import { decodeRendered } from '../text/decode.js';
import { redactText } from '../text/redact.js';
import { guardedLine, rendered } from '../text/render.js';
import { Gateway } from './gateway.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };

/** A server whose every failure says `text`, and whose second tool is called `text`. */
class SayingUpstream extends FakeUpstream {
  listingFails = false;
  constructor(
    name: string,
    private readonly text: string,
    private readonly fails: 'start' | 'prompts' | 'none',
  ) {
    const tool = (tool: string) => ({ name: tool, description: 'd', inputSchema: { type: 'object' } });
    super(name, {
      tools: [tool('plain'), tool(text)],
      prompts: [],
      capabilities: { logging: true },
      setLoggingLevel: async () => {
        throw new Error(text);
      },
    });
  }
  override async start() {
    if (this.fails === 'start') throw new Error(this.text);
  }
  override async listTools() {
    if (this.listingFails) throw new Error(this.text);
    return super.listTools();
  }
  override async listPrompts() {
    if (this.fails === 'prompts') throw Object.assign(new Error(this.text), { code: -32603 });
    return super.listPrompts();
  }
}

const remote = (name: string): HttpServerConfig => ({
  name,
  transport: 'http',
  url: 'https://example.invalid/mcp',
});

/** The lines a person reads on stderr while servers say `text` in every way they can. */
async function printedLines(text: string): Promise<string[]> {
  const home = await mkdtemp(join(tmpdir(), 'rf-report-lines-'));
  const printed: string[] = [];
  const upstreams = new Map<string, SayingUpstream>();
  const fails = { broken: 'start', partial: 'prompts', fine: 'none' } as const;
  const gateway = new Gateway({
    servers: [remote('broken'), remote('partial'), remote('fine')],
    pins: new PinStore(home),
    guard,
    // The result of a call cannot be recorded, for a reason as odd as the server's text.
    audit: {
      append: async (input) => {
        if (input.type === 'mcp.result') throw new Error(text);
        return 1;
      },
    },
    createUpstream: (config) => {
      const upstream = new SayingUpstream(config.name, text, fails[config.name as keyof typeof fails]);
      upstreams.set(config.name, upstream);
      return upstream;
    },
    // The CLI's sink: the last guard, then the terminal.
    log: (line) => printed.push(guardedLine(line)),
    session: 'test',
  });
  await gateway.start();
  await gateway.setLoggingLevel('info');
  await gateway.callTool('fine_plain', {}, {}, undefined);
  await expect.poll(() => printed.some((line) => line.startsWith('ringfence: audit: '))).toBe(true);
  upstreams.get('partial')!.listingFails = true;
  await gateway.refresh('partial');
  upstreams.get('fine')!.lose(text);
  await gateway.close();
  await rm(home, { recursive: true, force: true });
  return printed;
}

/** The same lines with the server's text as it came: what each printed line must decode to. */
function sourceLines(source: string): string[] {
  // Errors are redacted before they are rendered: a secret-looking part of the text is `***`.
  const text = redactText(source);
  return [
    `ringfence: broken failed to start and is skipped: ${text}`,
    `ringfence: partial: listing its prompts failed, so none is exposed: [-32603] ${text}`,
    `ringfence: partial: setting its log level failed: ${text}`,
    `ringfence: fine: setting its log level failed: ${text}`,
    // A log level is forwarded through the pipeline (issue 21): its result entry fails as a call's does.
    `ringfence: audit: the result of partial/log-level info could not be recorded: ${text}`,
    `ringfence: audit: the result of fine/log-level info could not be recorded: ${text}`,
    `ringfence: fine stopped: ${text}. Its tools and prompts fail until the gateway restarts.`,
    `ringfence: audit: the result of fine/plain could not be recorded: ${text}`,
    `ringfence: partial: re-listing its tools and prompts failed, all are withheld: ${text}`,
  ];
}

/**
 * A withheld line as it came: the tool's name as the server sent it, and the reason, which
 * quotes the name as exposed (or says why it cannot be pinned, for a lone surrogate).
 */
function isWithheldSource(line: string, text: string): boolean {
  for (const server of ['partial', 'fine']) {
    const head = `ringfence: withheld ${server}/${text}: `;
    const tail = ". The server's other tools are unaffected; report this one to the server's author.";
    if (!line.startsWith(head) || !line.endsWith(tail)) continue;
    const reason = line.slice(head.length, -tail.length);
    if (
      reason === `"${server}_${text}" is over 128 characters or uses characters outside [A-Za-z0-9_.-]` ||
      reason.startsWith('the definition cannot be pinned: a string with a lone surrogate')
    )
      return true;
  }
  return false;
}

describe('report lines of mcp serve', () => {
  it('over random server text: every printed line is rendered once and decodes back to the source', async () => {
    const random = hostileText(2101, 10);
    let checked = 0;
    for (let i = 0; i < 120; i++) {
      const text = random.next();
      // A text that is a valid tool name is exposed, not withheld; the others say it.
      if (text.length === 0 || /^[A-Za-z0-9_.-]{1,128}$/.test(text) || text.length > 300) continue;
      const printed = (await printedLines(text)).filter((line) => !line.startsWith('ringfence: first sight'));
      const expected = sourceLines(text);
      for (const line of printed) {
        // Nothing was left for the guard: the gateway rendered every server word where it built the line.
        expect(guardedLine(line)).toBe(line);
        expect(line).not.toMatch(/[\n\r\u2028\u2029\u0085\u001b]/);
      }
      const decoded = printed.map(decodeRendered);
      const withheld = decoded.filter((line) => line.startsWith('ringfence: withheld '));
      expect(withheld, JSON.stringify(text)).toHaveLength(2);
      for (const line of withheld)
        expect(isWithheldSource(line, text), JSON.stringify({ text, line })).toBe(true);
      expect(decoded.filter((line) => !withheld.includes(line)).sort()).toEqual([...expected].sort());
      // The tool name in the withheld label is a name: its spaces are escaped; and so is the
      // exposed name its reason quotes (rendered once, as a name: never as a line, never twice).
      const label = printed.filter((line) => line.includes(`withheld fine/${rendered(text, 'name')}:`));
      expect(label).toHaveLength(1);
      if (decodeRendered(label[0]!).includes(`: "fine_${text}" is over 128`))
        expect(label[0], JSON.stringify(text)).toContain(
          `: "${rendered(`fine_${text}`, 'name')}" is over 128`,
        );
      checked++;
    }
    expect(checked).toBeGreaterThan(60);
  });

  it('a runtime or engine error quoting a URL with its password or token shows neither', async () => {
    const printed = await printedLines('cannot reach https://u:hunter2Secret@h/x?access_token=hunter2Secret');
    const errors = printed.filter((line) => !line.startsWith('ringfence: withheld '));
    expect(errors.find((l) => l.includes('failed to start'))).toBe(
      'ringfence: broken failed to start and is skipped: cannot reach https://***@h/x?access_token=***',
    );
    expect(errors.length).toBeGreaterThan(5);
    for (const line of errors) expect(line).not.toContain('hunter2Secret');
  });

  it('a real ESC prints as \\u{1B} and the six characters \\u{1B} print as \\\\u{1B}: never the same', async () => {
    const realEscape = (await printedLines('x\u001b[2K')).find((l) => l.includes('failed to start'))!;
    const literal = (await printedLines('x\\u{1B}[2K')).find((l) => l.includes('failed to start'))!;
    expect(realEscape).toBe('ringfence: broken failed to start and is skipped: x\\u{1B}[2K');
    expect(literal).toBe('ringfence: broken failed to start and is skipped: x\\\\u{1B}[2K');
    const prompts = (await printedLines('x\u001b[2K')).find((l) => l.includes('listing its prompts'))!;
    expect(prompts).toBe(
      'ringfence: partial: listing its prompts failed, so none is exposed: [-32603] x\\u{1B}[2K',
    );
  });

  it('tool names show spaces escaped, as names do everywhere', async () => {
    const lines = await printedLines('read  file (allowed)');
    expect(lines).toContain(
      'ringfence: withheld fine/read\\u{20}\\u{20}file\\u{20}(allowed): "fine_read\\u{20}\\u{20}file\\u{20}(allowed)" is over 128 characters or uses characters outside [A-Za-z0-9_.-]. The server\'s other tools are unaffected; report this one to the server\'s author.',
    );
  });
});
