// Declarations of constants.js: the protocol's string values, named as the
// wire names them. test/constants.test.js checks they match constants.js.

/** Message roles. */
export declare const RoleUser: 'user';
export declare const RoleAgent: 'agent';

/** Message visibility. */
export declare const VisibilityVisible: 'visible';
export declare const VisibilityInternal: 'internal';

/** The state of an agent message, and of a streamed text or reasoning part. */
export declare const StateStreaming: 'streaming';
export declare const StateDone: 'done';

/** Part types. */
export declare const PartText: 'text';
export declare const PartReasoning: 'reasoning';
export declare const PartContext: 'context';
export declare const PartFile: 'file';
export declare const PartData: 'data';
export declare const PartTool: 'tool';
export declare const PartInteraction: 'interaction';
export declare const PartAction: 'action';
export declare const PartError: 'error';

/** The states of a tool part. */
export declare const ToolInputStreaming: 'input-streaming';
export declare const ToolInputAvailable: 'input-available';
export declare const ToolAwaitingApproval: 'awaiting-approval';
export declare const ToolRunning: 'running';
export declare const ToolOutputAvailable: 'output-available';
export declare const ToolOutputError: 'output-error';
export declare const ToolOutputDenied: 'output-denied';

/** The kinds of an interaction's request. */
export declare const InteractionKindApproval: 'approval';
export declare const InteractionKindQuestion: 'question';

/** The statuses of an interaction part. */
export declare const InteractionPending: 'pending';
export declare const InteractionResolved: 'resolved';
export declare const InteractionCancelled: 'cancelled';

/** The states of an action part. */
export declare const ActionPending: 'pending';
export declare const ActionCompleted: 'completed';
export declare const ActionFailed: 'failed';

/** The scopes of an error part. */
export declare const ErrorScopeStep: 'step';
export declare const ErrorScopeTurn: 'turn';
export declare const ErrorScopeSession: 'session';

/** Session actions (POST /v1/sessions/{id}/actions, Session.action). */
export declare const ActionStop: 'stop';
export declare const ActionSetModel: 'set_model';
export declare const ActionSetApprovalMode: 'set_approval_mode';
export declare const ActionRetry: 'retry';

/** Approval modes, the value of ActionSetApprovalMode. */
export declare const ApprovalAsk: 'ask';
export declare const ApprovalAuto: 'auto';

/** A session's sync status (Session.status, View.status). */
export declare const StatusIdle: 'idle';
export declare const StatusConnecting: 'connecting';
export declare const StatusSyncing: 'syncing';
export declare const StatusLive: 'live';
export declare const StatusBackoff: 'backoff';
export declare const StatusClosed: 'closed';
