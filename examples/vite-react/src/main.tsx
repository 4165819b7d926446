// The app's entry: which server to talk to comes from ?server= (the test
// serves this build from another port than the server), defaulting to
// `make run`'s address.
import { createRoot } from 'react-dom/client';
import { App } from './App';

const server = new URLSearchParams(location.search).get('server') ?? 'http://127.0.0.1:8080';
createRoot(document.getElementById('root')!).render(<App server={server} />);
