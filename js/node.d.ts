// The Node entry exports the same API as the browser entry.
export * from './index.js';
