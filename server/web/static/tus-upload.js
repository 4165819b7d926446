// "tus-js-client" for the page: the JS package's uploads entry point
// (/js/uploads.js, docs/files.md) imports it by name, and index.html's
// import map points that name here. tus-js-client publishes its browser
// build as UMD (it sets window.tus), so it is loaded once as a classic
// script, when the page first attaches a file, and re-exported.

await new Promise((resolve, reject) => {
  if (globalThis.tus) {
    resolve();
    return;
  }
  const script = document.createElement('script');
  script.src = new URL('./vendor/tus.min.js', import.meta.url).href;
  script.onload = () => resolve();
  script.onerror = () => reject(new Error('could not load tus-js-client'));
  document.head.append(script);
});

export const { Upload, isSupported, canStoreURLs, defaultOptions } = globalThis.tus;
export default globalThis.tus;
