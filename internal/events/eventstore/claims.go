package eventstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/events/delivery"
)

// claimSQL leases due deliveries under a token: the lease is next_attempt_at, so a
// claim whose instance dies simply falls due again. The candidates are the oldest
// due deliveries outside skip, and the oldest due one of each slow endpoint
// (skip.Slow), one branch each of a UNION. On PostgreSQL the candidates are locked
// with SKIP LOCKED, so concurrent instances claim disjoint rows without waiting;
// SQLite's IMMEDIATE transactions already serialise its one writer. Its
// arguments, in order, are claimArgs'.
func (s *Store) claimSQL(skip *delivery.Skip) string {
	lock := ""
	if s.dialect == database.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	due := `SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?`
	if database.AnyImportPending() {
		// A pending import's events are delivered once it is published (migration 0031).
		due += ` AND ` + database.PublishedSQL("import_id")
	}
	tenants := ""
	if skip != nil && len(skip.Tenants) > 0 {
		tenants = " AND tenant_id NOT IN ?"
	}
	endpoints := ""
	if skip != nil && len(skip.Endpoints)+len(skip.Slow) > 0 {
		endpoints = " AND endpoint_id NOT IN ?"
	}
	candidates := `SELECT id FROM (` + due + endpoints + tenants + ` AND ` + enabledTenant +
		` ORDER BY next_attempt_at LIMIT ?` + lock + `) AS oldest`
	if skip != nil {
		for range skip.Slow {
			candidates += ` UNION ALL SELECT id FROM (` + due + ` AND endpoint_id = ?` + tenants + ` AND ` + enabledTenant +
				` ORDER BY next_attempt_at LIMIT 1` + lock + `) AS one`
		}
	}
	return `UPDATE webhook_deliveries SET lease_token = ?, next_attempt_at = ?, attempts = attempts + 1
		WHERE id IN (` + candidates + `) RETURNING id`
}

// claimArgs are claimSQL's arguments: the token and the lease's end, then each
// branch's. limit counts the slow endpoints' branches too.
func claimArgs(token string, leaseEnds, now time.Time, limit int, skip *delivery.Skip) []any {
	args := []any{token, leaseEnds.UTC(), now.UTC()}
	var tenants []string
	if skip != nil {
		tenants = skip.Tenants
		if out := append(slices.Clone(skip.Endpoints), skip.Slow...); len(out) > 0 {
			args = append(args, out)
		}
	}
	if len(tenants) > 0 {
		args = append(args, tenants)
	}
	var slow []string
	if skip != nil {
		slow = skip.Slow
	}
	args = append(args, max(0, limit-len(slow)))
	for _, ep := range slow {
		args = append(args, now.UTC(), ep)
		if len(tenants) > 0 {
			args = append(args, tenants)
		}
	}
	return args
}

type jobRow struct {
	ID         int64
	TenantID   string
	EventID    string
	EndpointID string
	Attempts   int
	RetryUntil time.Time
	CreatedAt  time.Time
	URL        string `gorm:"column:url"`
	Secret     string
	Payload    string
	// The secret a roll replaced, sealed, and when it stops signing (migration 0020).
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	APIVersion              string
}

const jobSQL = `SELECT d.id, d.tenant_id, d.event_id, d.endpoint_id, d.attempts, d.retry_until, d.created_at,
	e.url, e.secret, ev.payload, e.previous_secret, e.previous_secret_expires_at, e.api_version
	FROM webhook_deliveries d
	JOIN webhook_endpoints e ON e.id = d.endpoint_id
	JOIN events ev ON ev.id = d.event_id
	WHERE d.id IN ? AND d.lease_token = ?`

// Claim leases up to limit due deliveries and returns them with what sending needs.
func (s *Store) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int, skip *delivery.Skip) ([]*delivery.Job, error) {
	var b [16]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	args := claimArgs(token, now.Add(lease), now, limit, skip)
	conn := database.Conn(ctx, s.db)
	if s.dialect == database.SQLite && !s.anyDue(conn, now, skip) {
		// An UPDATE takes SQLite's one write lock even when it matches nothing; a
		// read first keeps idle polls from queueing behind, or ahead of, writers.
		return nil, nil
	}
	var rows []jobRow
	if s.dialect == database.Postgres {
		// One statement: the claim's RETURNING joined to what sending needs.
		if err := s.claim(ctx, conn, claimJobsSQL(s.claimSQL(skip)), args, &rows); err != nil {
			return nil, err
		}
	} else {
		// SQLite allows no UPDATE in a WITH, so the claimed rows are read after.
		var ids []int64
		if err := s.claim(ctx, conn, s.claimSQL(skip), args, &ids); err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, nil
		}
		if err := conn.Raw(jobSQL, ids, token).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("load claimed deliveries: %w", database.Classify(err))
		}
	}
	jobs := make([]*delivery.Job, len(rows))
	for i, r := range rows {
		secret, err := s.openSecret(r.EndpointID, r.Secret)
		if err != nil {
			return nil, err
		}
		// The event as the endpoint's API version shows it (docs/api-versions.md):
		// stored in the newest, rendered for each endpoint as it is sent.
		payload, err := apiversion.API.EventBody(apiversion.Version(r.APIVersion), []byte(r.Payload))
		if err != nil {
			return nil, fmt.Errorf("render event %s for endpoint %s: %w", r.EventID, r.EndpointID, err)
		}
		secrets := []string{secret}
		if r.PreviousSecret != "" && r.PreviousSecretExpiresAt != nil && now.Before(*r.PreviousSecretExpiresAt) {
			prev, err := s.openSecret(r.EndpointID, r.PreviousSecret)
			if err != nil {
				return nil, err
			}
			secrets = append(secrets, prev)
		}
		jobs[i] = &delivery.Job{DeliveryID: r.ID, Token: token, TenantID: r.TenantID, EventID: r.EventID,
			EndpointID: r.EndpointID, URL: r.URL, Secrets: secrets, Payload: payload,
			Attempt: r.Attempts, RetryUntil: r.RetryUntil.UTC(), CreatedAt: r.CreatedAt.UTC(), LeaseEnds: now.Add(lease)}
	}
	return jobs, nil
}

// enabledTenant keeps a disabled tenant's deliveries out of every claim: they wait,
// pending, until it is enabled again (and are given up as usual once past their
// retry_until, WEBHOOK_RETRY_FOR).
//
// A disabled endpoint's deliveries are left out too: disabling one moves its queue
// into its log as skipped, and this closes the race with an event queued meanwhile.
const enabledTenant = "tenant_id NOT IN (SELECT id FROM tenants WHERE disabled_at IS NOT NULL)" +
	" AND endpoint_id NOT IN (SELECT id FROM webhook_endpoints WHERE disabled_at IS NOT NULL)"

// claimJobsSQL wraps a claim (claimSQL) so that it returns, in the same statement,
// the jobRow of every delivery it claimed (PostgreSQL: a data-modifying WITH).
func claimJobsSQL(claim string) string {
	claim = strings.TrimSuffix(claim, " RETURNING id") +
		" RETURNING id, tenant_id, event_id, endpoint_id, attempts, retry_until, created_at"
	return `WITH d AS (` + claim + `)
	SELECT d.id, d.tenant_id, d.event_id, d.endpoint_id, d.attempts, d.retry_until, d.created_at,
	e.url, e.secret, ev.payload, e.previous_secret, e.previous_secret_expires_at, e.api_version
	FROM d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN events ev ON ev.id = d.event_id`
}

// claim runs a claim statement with args into dest. GORM sends an UPDATE … RETURNING
// read through Scan as a query, which the write gate's callbacks do not see, so it
// takes the gate here: on SQLite the claim queues with the other writers rather than
// jumping the queue.
func (s *Store) claim(ctx context.Context, conn *gorm.DB, query string, args []any, dest any) error {
	leave, err := database.EnterWrite(ctx, s.db)
	if err != nil {
		return fmt.Errorf("claim deliveries: %w", database.Classify(err))
	}
	defer leave()
	if err := conn.Raw(query, args...).Scan(dest).Error; err != nil {
		return fmt.Errorf("claim deliveries: %w", database.Classify(err))
	}
	return nil
}

// anyDue reports whether a pending delivery is due at now, outside skip (a slow
// endpoint's count: the claim takes one of theirs). On error it says yes, so that
// the claim itself reports the error.
func (s *Store) anyDue(conn *gorm.DB, now time.Time, skip *delivery.Skip) bool {
	q := conn.Table("webhook_deliveries").Select("id").Where("state = ? AND next_attempt_at <= ?", statePending, now.UTC()).
		Where(enabledTenant)
	if skip != nil && len(skip.Endpoints) > 0 {
		q = q.Where("endpoint_id NOT IN ?", skip.Endpoints)
	}
	if skip != nil && len(skip.Tenants) > 0 {
		q = q.Where("tenant_id NOT IN ?", skip.Tenants)
	}
	var ids []int64
	if err := q.Limit(1).Pluck("id", &ids).Error; err != nil {
		return true
	}
	return len(ids) > 0
}

// Settle records a batch of attempts in one transaction: one DELETE of the
// deliveries delivered (fenced by their claims' tokens), one UPDATE per failure (a
// given-up delivery stays, failed), one INSERT of the log entries whose claims held.
func (s *Store) Settle(ctx context.Context, batch []delivery.Settlement) ([]bool, error) {
	held := make([]bool, len(batch))
	err := database.RunInTx(ctx, s.db, func(ctx context.Context) error {
		conn := database.Conn(ctx, s.db)
		if err := s.settleDelivered(conn, batch, held); err != nil {
			return err
		}
		var log []attemptRow
		for i, st := range batch {
			j, r := st.Job, st.Result
			if !r.Delivered {
				set := map[string]any{"lease_token": nil, "state": stateFailed}
				if !r.RetryAt.IsZero() {
					set["state"], set["next_attempt_at"] = statePending, r.RetryAt.UTC()
				}
				res := conn.Table("webhook_deliveries").Where("id = ? AND lease_token = ?", j.DeliveryID, j.Token).Updates(set)
				if res.Error != nil {
					return res.Error
				}
				held[i] = res.RowsAffected == 1
			}
			if held[i] {
				a := r.Attempt
				log = append(log, attemptRow{TenantID: j.TenantID, EndpointID: j.EndpointID, EventID: j.EventID,
					DeliveryID: j.DeliveryID, Attempt: a.N, StatusCode: a.StatusCode, Error: truncate(a.Error, 200),
					DurationMs: a.Duration.Milliseconds(), CreatedAt: a.CreatedAt.UTC()})
			}
		}
		if err := s.noteFailing(conn, batch, held); err != nil {
			return err
		}
		if len(log) == 0 {
			return nil
		}
		return conn.Create(&log).Error
	})
	if err != nil {
		return nil, fmt.Errorf("settle deliveries: %w", err)
	}
	return held, nil
}

// noteFailing keeps each endpoint's failing_since: set at its first failed attempt
// since its last delivered one, cleared by a delivered one (a batch holding both
// clears it). Conditional updates: an endpoint that is failing still, or not
// failing, is not written again.
func (s *Store) noteFailing(conn *gorm.DB, batch []delivery.Settlement, held []bool) error {
	failed := map[string]time.Time{}
	var delivered []string
	for i, st := range batch {
		if !held[i] {
			continue
		}
		if st.Result.Delivered {
			delivered = append(delivered, st.Job.EndpointID)
			continue
		}
		at := st.Result.Attempt.CreatedAt.UTC()
		if prev, ok := failed[st.Job.EndpointID]; !ok || at.Before(prev) {
			failed[st.Job.EndpointID] = at
		}
	}
	for ep, at := range failed {
		if err := conn.Exec(`UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL`,
			at, ep).Error; err != nil {
			return err
		}
	}
	if len(delivered) > 0 {
		return conn.Exec(`UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN ? AND failing_since IS NOT NULL`,
			delivered).Error
	}
	return nil
}

// settleDelivered removes the batch's delivered deliveries from the queue in one
// statement, each only if its claim's token still holds it, and notes which did in
// held. The delivery log keeps their story; the queue keeps only what is still due.
func (s *Store) settleDelivered(conn *gorm.DB, batch []delivery.Settlement, held []bool) error {
	var pairs []string
	var args []any
	index := map[int64]int{}
	for i, st := range batch {
		if st.Result.Delivered {
			pairs = append(pairs, "(?, ?)")
			args = append(args, st.Job.DeliveryID, st.Job.Token)
			index[st.Job.DeliveryID] = i
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	var ids []int64
	err := conn.Raw(`DELETE FROM webhook_deliveries WHERE (id, lease_token) IN (`+strings.Join(pairs, ", ")+`) RETURNING id`,
		args...).Scan(&ids).Error
	for _, id := range ids {
		held[index[id]] = true
	}
	return err
}

// Release makes j's delivery due at once, unattempted, if j's claim still holds it.
func (s *Store) Release(ctx context.Context, j *delivery.Job) error {
	res := database.Conn(ctx, s.db).Exec(`UPDATE webhook_deliveries SET lease_token = NULL, attempts = attempts - 1,
		next_attempt_at = ? WHERE id = ? AND lease_token = ?`, time.Now().UTC(), j.DeliveryID, j.Token)
	if res.Error != nil {
		return fmt.Errorf("release delivery: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return delivery.ErrLeaseLost
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// ReleaseClaims makes every claimed delivery due at now. Only for a store no other
// process can be using (SQLite, at startup): the claims are then a dead process's,
// and need not wait for their leases to end.
func (s *Store) ReleaseClaims(ctx context.Context, now time.Time) (int, error) {
	res := database.Conn(ctx, s.db).Exec(`UPDATE webhook_deliveries SET lease_token = NULL, next_attempt_at = ?
		WHERE state = 'pending' AND lease_token IS NOT NULL`, now.UTC())
	if res.Error != nil {
		return 0, fmt.Errorf("release claims: %w", res.Error)
	}
	return int(res.RowsAffected), nil
}
