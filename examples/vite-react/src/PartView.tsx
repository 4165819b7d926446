import type { Part } from '@agentsync/client';
import type { SessionState } from '@agentsync/client/react';

// One part, by type. Every branch reads fields only its type has: with
// `tsc --strict` this checks that Part narrows (by type, a tool by state,
// an interaction's request by kind).
export function PartView({ part, answer }: { part: Part; answer: SessionState['answer'] }) {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return (
        <pre className="part" data-type={part.type} data-state={part.state ?? ''}>
          {part.text}
        </pre>
      );
    case 'tool':
      return (
        <div className="part" data-type="tool" data-state={part.state}>
          {part.tool_name}: {part.state}
          {part.state === 'output-available' && <code> {JSON.stringify(part.output)}</code>}
        </div>
      );
    case 'interaction': {
      const { request } = part;
      const pending = part.status === 'pending';
      return (
        <div className="part" data-type="interaction" data-state={part.status}>
          {request.kind === 'approval' ? `approve ${request.tool_name}?` : request.question}
          {pending && request.kind === 'approval' && (
            <>
              <button data-approve={part.interaction_id} onClick={() => void answer(part.interaction_id, { approved: true })}>
                Approve
              </button>
              <button data-deny={part.interaction_id} onClick={() => void answer(part.interaction_id, { approved: false })}>
                Deny
              </button>
            </>
          )}
        </div>
      );
    }
    case 'file':
      return (
        <a className="part" data-type="file" data-state="" href={part.url} download={part.filename}>
          {part.filename ?? part.media_type}
        </a>
      );
    case 'data':
      return (
        <code className="part" data-type="data" data-state="">
          {part.data_type}: {JSON.stringify(part.data)}
        </code>
      );
    case 'context':
      return (
        <blockquote className="part" data-type="context" data-state="">
          {part.context}
        </blockquote>
      );
    case 'action':
      return (
        <div className="part" data-type="action" data-state={part.state}>
          {part.title ?? part.action_type}
        </div>
      );
    case 'error':
      return (
        <div className="part" data-type="error" data-state="">
          {part.code}: {part.message}
        </div>
      );
  }
}
