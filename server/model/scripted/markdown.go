package scripted

// markdownSample is what scenario "markdown" streams: the constructs a real
// model answers with (headings, lists, code, a table, links), plus raw HTML
// that a client must sanitize, never run. The demo page's tests assert each.
const markdownSample = "## Markdown, streamed\n\n" +
	"A reply with **bold**, *italic*, `inline code` and a [link](https://example.com).\n\n" +
	"Steps:\n\n" +
	"1. Parse the text as it streams.\n" +
	"2. Render the finished blocks once.\n" +
	"3. Re-render only the open block.\n\n" +
	"- a bullet\n" +
	"- another bullet\n\n" +
	"```go\n" +
	"func add(a, b int) int {\n" +
	"\treturn a + b // highlighted\n" +
	"}\n" +
	"```\n\n" +
	"| feature | state |\n" +
	"|---|---|\n" +
	"| lists | done |\n" +
	"| code | done |\n\n" +
	// The payloads follow their own description in code: the reader sees
	// what was removed, and the sanitizer leaves no gap in the sentence.
	"> Raw HTML is sanitized: a `<script>` tag, an `<img onerror>` handler and a `javascript:` link " +
	"never run. Sent raw here, after the colon: <script>window.__pwned = 1</script>" +
	"<img src=\"x\" onerror=\"window.__pwned = 2\">the script and the image are removed, and " +
	"[a script link](javascript:window.__pwned=3) stays plain text.\n"
