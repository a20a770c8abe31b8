// A bulk operation (POST /v1/jobs/bulk, docs/http-api.md) followed to its
// end: its progress (GET /v1/jobs/bulk/ID) shown every half second while
// the page that started it is on screen, and not a request more once the
// person has gone to another page (the operation itself goes on).
import {get} from './api.js';

export const PAST = {retry: 'retried', cancel: 'cancelled', delete: 'deleted'};
const PROGRESS_MS = 500;

// "3 jobs would be retried": a dry run's answer.
export function wouldBe(dry) {
  return `${dry.count} job${dry.count === 1 ? '' : 's'} would be ${PAST[dry.action]}`;
}

// Shows `op` in `progress` until it is done (true) or `page` (the node the
// route put on screen) is no longer in the document (false).
export async function follow(op, progress, page) {
  for (;;) {
    progress.dataset.state = op.state;
    progress.textContent = `Operation ${op.id} (${op.action}): ${op.done} of ${op.total} ` +
      `${PAST[op.action]}, ${op.state}.`;
    if (op.state === 'done') return true;
    await new Promise((resolve) => setTimeout(resolve, PROGRESS_MS));
    if (!page.isConnected) return false;
    op = await get(`/v1/jobs/bulk/${op.id}`);
  }
}
