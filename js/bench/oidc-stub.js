// @vercel/oidc for bench/chromium.html: its builds are CommonJS, which a
// page cannot import. The AI SDK's gateway imports these two and calls them
// only when a model goes through the Vercel gateway, which the bench never
// does; readUIMessageStream needs neither.
export function getContext() {
  return {};
}
export async function getVercelOidcToken() {
  throw new Error('@vercel/oidc: not available in the bench page');
}
