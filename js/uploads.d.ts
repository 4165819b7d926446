import type { AgentsyncError } from './index.js';

/** A file of a session, as a finished upload answers it. */
export interface UploadedFile {
  /** Hex SHA-256 of the bytes. */
  blobId: string;
  /** The path of the file under the server's root: a file part's url. */
  url: string;
  filename: string;
  mediaType: string;
  size: number;
}

export interface UploadOptions {
  /** The server's root, e.g. "http://127.0.0.1:8080". */
  baseURL: string;
  token?: string;
  sessionId: string;
  /** Defaults: the File's name and type. */
  filename?: string;
  mediaType?: string;
  onProgress?: (sent: number, total: number) => void;
  /** Keep the upload URL (localStorage in a browser) to resume after a reload; default true. */
  resume?: boolean;
  chunkSize?: number;
  retryDelays?: number[];
}

export interface UploadHandle {
  /** Resolves with the file, or rejects with an AgentsyncError (too_large, forbidden, not_found...). */
  done: Promise<UploadedFile>;
  pause(): Promise<void>;
  resume(): void;
  cancel(): Promise<void>;
  uploadURL(): string | null;
}

export declare function uploadFile(file: Blob | Uint8Array, opts: UploadOptions): UploadHandle;

export declare function sendWithFiles<T>(
  post: (parts: Array<Record<string, unknown>>) => Promise<T>,
  parts: Array<Record<string, unknown>>,
  files: Array<Blob | Uint8Array | ({ file: Blob | Uint8Array } & Partial<UploadOptions>)>,
  opts: UploadOptions,
): Promise<T>;

export type { AgentsyncError };
