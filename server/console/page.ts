/**
 * The console's page: static HTML, its style, and one script from the same origin (the content
 * security policy allows nothing else). Everything live arrives through /console/events.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pulumi-proxy reference server</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:0;color:#111;background:#f8fafc}
header{background:#1e293b;color:#fff;padding:10px 16px;display:flex;gap:24px;align-items:baseline}
header h1{font-size:16px;margin:0}header .muted{color:#cbd5e1}
main{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px;padding:12px}
section{background:#fff;border:1px solid #e2e8f0;border-radius:6px;padding:8px 12px;min-width:0}
section.wide{grid-column:1 / -1}h2{font-size:14px;margin:4px 0 8px}
table{border-collapse:collapse;width:100%}td,th{padding:2px 6px;border-bottom:1px solid #f1f5f9;text-align:left;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:260px}
.scroll{max-height:320px;overflow:auto}.log{height:320px;contain:strict}table.fixed{table-layout:fixed}.muted{color:#64748b}.bad{color:#b91c1c}.ok{color:#15803d}
.bar{position:relative;height:12px;background:#e2e8f0;border-radius:3px;min-width:120px}
.bar i{position:absolute;left:0;top:0;bottom:0;background:#3b82f6;border-radius:3px}
.bar.full i{background:#dc2626}
#status.down{color:#fca5a5}.tabs button{margin-right:4px}.tabs button.on{font-weight:700}
</style></head>
<body>
<header><h1>pulumi-proxy reference server</h1><span class="muted" id="urls"></span><span id="status">connecting…</span></header>
<main>
<section class="wide"><h2>Objects</h2><div class="tabs" id="tabs"></div><div class="scroll" id="objects"></div></section>
<section><h2>Requests <span class="muted" id="rate"></span></h2><div class="scroll log"><table class="fixed"><colgroup><col style="width:104px"><col style="width:70px"><col><col style="width:60px"><col style="width:170px"><col style="width:44px"></colgroup><thead><tr><th>time</th><th>method</th><th>path</th><th>status</th><th>key</th><th>ms</th></tr></thead><tbody id="log"></tbody></table></div></section>
<section><h2>Rate-limit window per key</h2><table><tbody id="windows"></tbody></table></section>
<section class="wide"><h2>Gateway traffic per proxy user</h2><p class="muted">Today against the daily ceiling, this month against the monthly ceiling, bytes a second over the last minute.</p><table><thead><tr><th>user</th><th>today</th><th></th><th>month</th><th></th><th>bytes/s, last 60 s</th></tr></thead><tbody id="gateway"></tbody></table></section>
<section class="wide"><h2>Fault injection</h2><pre id="faults"></pre></section>
</main>
<script src="/console/app.js"></script>
</body></html>
`;

/** The page may run only its own script and talk only to its own origin. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
