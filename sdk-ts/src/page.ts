/** Cursor paging (docs/openapi.yaml, `limit` and `cursor`) as async iteration. */

import type { Page } from "./types.js";

/**
 * paginate yields every item of every page, fetching a page only when the
 * previous one is used up, so `for await` with `break` stops fetching. Each
 * page is its own call, with its own retry budget; an error rejects the
 * iteration at the page that failed.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  cursor?: string,
): AsyncGenerator<T, void, undefined> {
  let next = cursor;
  for (;;) {
    const page = await fetchPage(next);
    yield* page.data;
    if (!page.hasMore || !page.nextCursor) return;
    next = page.nextCursor;
  }
}
