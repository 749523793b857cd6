/**
 * today is the UTC calendar day, YYYY-MM-DD, moved by `days`: the API's dates
 * are UTC days, and so are its notices (review.overdue, action.overdue) and the
 * bounds it puts on a date (docs/register.md). One day for the whole dashboard,
 * so a review the list filters as overdue is the one its page marks overdue and
 * the one the server has noticed, whatever the user's clock says.
 */
export function today(days = 0, now = Date.now()): string {
  return new Date(now + days * 86_400_000).toISOString().slice(0, 10);
}
