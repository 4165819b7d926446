// Resumable uploads of files to a session (docs/files.md), through
// tus-js-client: an optional entry point (`@agentsync/client/uploads`), so
// only an app that imports it needs tus-js-client (a peer dependency).

import { Upload } from 'tus-js-client';
import { AgentsyncError } from './errors.js';

/**
 * Starts uploading `file` (a browser File or Blob, or a Node Buffer) to a
 * session. In a browser the upload URL is kept in localStorage under the
 * file's fingerprint, so a page reloaded mid-upload resumes from the offset
 * the server has (`resume: true`, the default).
 *
 * @returns {{ done: Promise<{blobId: string, url: string, filename: string, mediaType: string, size: number}>,
 *             pause: () => Promise<void>, resume: () => void, cancel: () => Promise<void>, uploadURL: () => string | null }}
 */
export function uploadFile(file, opts) {
  const { baseURL, token, sessionId, onProgress, resume = true } = opts;
  const filename = opts.filename ?? file.name ?? 'file';
  const mediaType = opts.mediaType ?? file.type ?? '';
  const size = file.size ?? file.length;
  let finished = null;
  let upload;
  const done = new Promise((resolve, reject) => {
    upload = new Upload(file, {
      endpoint: `${baseURL.replace(/\/+$/, '')}/v1/uploads`,
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      metadata: { session_id: sessionId, filename, filetype: mediaType },
      uploadSize: size,
      chunkSize: opts.chunkSize ?? Infinity,
      retryDelays: opts.retryDelays ?? [0, 250, 1000, 2000, 4000, 8000],
      storeFingerprintForResuming: resume,
      removeFingerprintOnSuccess: true,
      onProgress: (sent, total) => onProgress?.(sent, total),
      onAfterResponse: (_req, res) => {
        const url = res.getHeader('Agentsync-File-Url');
        if (url) finished = { blobId: res.getHeader('Agentsync-Blob-Id'), url };
      },
      // Typed refusals (too_large, forbidden, not_found) are final;
      // network failures, 409 offset conflicts, 423 locks and 5xx retry.
      onShouldRetry: (err) => {
        const status = err.originalResponse?.getStatus?.() ?? 0;
        return status === 0 || status === 409 || status === 423 || status === 429 || status >= 500;
      },
      onError: (err) => reject(typed(err)),
      onSuccess: () => {
        if (!finished) {
          reject(new AgentsyncError('malformed', 'the upload finished without Agentsync-File-Url'));
          return;
        }
        resolve({ ...finished, filename, mediaType, size });
      },
    });
  });
  const start = async () => {
    if (resume) {
      const previous = await upload.findPreviousUploads();
      if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
    }
    upload.start();
  };
  start();
  return {
    done,
    pause: () => upload.abort(false),
    resume: () => upload.start(),
    cancel: () => upload.abort(true),
    uploadURL: () => upload.url,
  };
}

/**
 * Uploads every file, then posts one user message: `parts`, then a file
 * part per file. Nothing is posted unless every upload finished. `post`
 * is the app's send (Session.send or a fetch): it gets the parts.
 */
export async function sendWithFiles(post, parts, files, opts) {
  const uploaded = [];
  for (const f of files) {
    const u = uploadFile(f.file ?? f, { ...opts, ...(f.file ? f : {}) });
    uploaded.push(await u.done);
  }
  const fileParts = uploaded.map((u) => ({ type: 'file', url: u.url, media_type: u.mediaType, filename: u.filename }));
  return post([...parts, ...fileParts]);
}

function typed(err) {
  const res = err.originalResponse;
  const status = res?.getStatus?.() ?? 0;
  let body = null;
  try {
    body = JSON.parse(res?.getBody?.() ?? '');
  } catch {
    body = null;
  }
  if (body?.code) return new AgentsyncError(body.code, body.message ?? '', { status });
  return new AgentsyncError(status ? 'internal' : 'closed', err.message ?? String(err), { status });
}
