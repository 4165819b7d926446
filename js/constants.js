// The protocol's string values as constants, each named as the wire names
// it: a group's prefix and the value in PascalCase (`awaiting-approval` is
// ToolAwaitingApproval, `set_approval_mode` ActionSetApprovalMode), the
// names the Go packages give them. test/constants.test.js holds the rule
// and the values to the Go constants.

/** Message roles. */
export const RoleUser = 'user';
export const RoleAgent = 'agent';

/** Message visibility. */
export const VisibilityVisible = 'visible';
export const VisibilityInternal = 'internal';

/** The state of an agent message, and of a streamed text or reasoning part. */
export const StateStreaming = 'streaming';
export const StateDone = 'done';

/** Part types. */
export const PartText = 'text';
export const PartReasoning = 'reasoning';
export const PartContext = 'context';
export const PartFile = 'file';
export const PartData = 'data';
export const PartTool = 'tool';
export const PartInteraction = 'interaction';
export const PartAction = 'action';
export const PartError = 'error';

/** The states of a tool part. */
export const ToolInputStreaming = 'input-streaming';
export const ToolInputAvailable = 'input-available';
export const ToolAwaitingApproval = 'awaiting-approval';
export const ToolRunning = 'running';
export const ToolOutputAvailable = 'output-available';
export const ToolOutputError = 'output-error';
export const ToolOutputDenied = 'output-denied';

/** The kinds of an interaction's request. */
export const InteractionKindApproval = 'approval';
export const InteractionKindQuestion = 'question';

/** The statuses of an interaction part. */
export const InteractionPending = 'pending';
export const InteractionResolved = 'resolved';
export const InteractionCancelled = 'cancelled';

/** The states of an action part. */
export const ActionPending = 'pending';
export const ActionCompleted = 'completed';
export const ActionFailed = 'failed';

/** The scopes of an error part. */
export const ErrorScopeStep = 'step';
export const ErrorScopeTurn = 'turn';
export const ErrorScopeSession = 'session';

/** Session actions (POST /v1/sessions/{id}/actions, Session.action). */
export const ActionStop = 'stop';
export const ActionSetModel = 'set_model';
export const ActionSetApprovalMode = 'set_approval_mode';
export const ActionRetry = 'retry';

/** Approval modes, the value of ActionSetApprovalMode. */
export const ApprovalAsk = 'ask';
export const ApprovalAuto = 'auto';

/** A session's sync status (Session.status, View.status). */
export const StatusIdle = 'idle';
export const StatusConnecting = 'connecting';
export const StatusSyncing = 'syncing';
export const StatusLive = 'live';
export const StatusBackoff = 'backoff';
export const StatusClosed = 'closed';
