// The view of a session that holds nothing yet: the Session's first view
// and useSession's while there is no session. Frozen: it is shared.
export const EMPTY_VIEW = Object.freeze({
  session_id: '',
  status: 'idle',
  messages: Object.freeze([]),
  total: 0,
  has_more_older: false,
  loading_older: false,
  include_internal: false,
});
