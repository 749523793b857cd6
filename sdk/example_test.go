package riskapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	riskapi "github.com/riskapi/riskapi/sdk"
)

// The examples run against an in-memory fake of the server (fake_test.go);
// against a real server, pass its URL and a real "rk_…" key.

// Create a risk and read back the server-derived score.
func Example() {
	srv := newFakeServer()
	defer srv.Close()
	ctx := context.Background()
	apiKey := testAPIKey

	c, err := riskapi.NewClient(apiKey, riskapi.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{
		Title: "Vendor contract missing a DPA", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4),
	})
	var apiErr *riskapi.Error
	if errors.As(err, &apiErr) {
		log.Fatalf("status %d, code %s, request %s", apiErr.Status, apiErr.Code, apiErr.RequestID)
	} else if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.ID, r.Title, "score", *r.RiskScore, r.Status)
	// Output: risk_1 Vendor contract missing a DPA score 12 open
}

// Options tune the retry policy; invalid values are refused by NewClient.
func ExampleNewClient() {
	_, err := riskapi.NewClient("rk_live_abc",
		riskapi.WithBaseURL("https://riskapi.example.com"),
		riskapi.WithMaxRetries(3),
		riskapi.WithMaxWait(10*time.Second),
		riskapi.WithMaxElapsed(30*time.Second),
	)
	fmt.Println(err)

	_, err = riskapi.NewClient("rk_live_abc", riskapi.WithMaxWait(0))
	fmt.Println(err)
	// Output:
	// <nil>
	// riskapi: NewClient: WithMaxWait: 0s is not positive
}

// Test the outcome of a failed call by code with errors.Is, or read the
// details with errors.As.
func ExampleError() {
	srv := newFakeServer()
	defer srv.Close()
	c, _ := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL))

	_, err := c.Risks.Get(context.Background(), "risk_missing")
	if errors.Is(err, riskapi.ErrNotFound) {
		fmt.Println("no such risk")
	}
	var apiErr *riskapi.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code, apiErr.RequestID)
	}

	_, err = c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: ""})
	if errors.As(err, &apiErr) && apiErr.Code == riskapi.CodeValidationFailed {
		for _, f := range apiErr.Errors {
			fmt.Printf("%s %s\n", f.Field, f.Detail)
		}
	}
	fmt.Println(err)
	// Output:
	// no such risk
	// 404 NOT_FOUND req_1
	// title is required
	// riskapi: 400 VALIDATION_FAILED: title: is required (request req_2)
}

// List ranges over every risk; pages are fetched as the loop advances.
func ExampleRisksService_List() {
	srv := newFakeServer()
	defer srv.Close()
	ctx := context.Background()
	c, _ := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL))
	for _, title := range []string{"No DPA", "Stale backups", "Shared admin account"} {
		if _, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: title}); err != nil {
			log.Fatal(err)
		}
	}

	for r, err := range c.Risks.List(ctx, &riskapi.RiskListParams{Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.ID, r.Title)
	}
	// Output:
	// risk_1 No DPA
	// risk_2 Stale backups
	// risk_3 Shared admin account
}

// Update changes only the fields that are set.
func ExampleRisksService_Update() {
	srv := newFakeServer()
	defer srv.Close()
	ctx := context.Background()
	c, _ := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL))
	r, _ := c.Risks.Create(ctx, &riskapi.RiskCreateParams{
		Title: "No DPA", Owner: &riskapi.RiskOwnerParams{Name: riskapi.Ptr("alice")}, Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4),
	})

	r, err := c.Risks.Update(ctx, r.ID, &riskapi.RiskUpdateParams{
		Status: riskapi.Ptr(riskapi.RiskStatusMitigated),
		Impact: riskapi.Ptr(2),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Title, r.Owner.Name, r.Status, *r.RiskScore)
	// Output: No DPA alice mitigated 6
}

// An upload reads its source again for every attempt, so the source must be
// re-readable: here a *strings.Reader (an io.ReaderAt); an *os.File works the
// same way, with Size from its Stat.
func ExampleAttachmentsService_Upload() {
	srv := newFakeServer()
	defer srv.Close()
	ctx := context.Background()
	c, _ := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL))
	r, _ := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "No DPA"})

	a, err := c.Attachments.Upload(ctx, r.ID, &riskapi.AttachmentUploadParams{
		File:        strings.NewReader("Dear vendor, please sign the DPA."),
		Filename:    "request.txt",
		ContentType: "text/plain",
		Description: "Email to the vendor",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.ID, a.Filename, a.Size, a.SHA256[:12])

	content, err := c.Attachments.Download(ctx, a.ID)
	if err != nil {
		log.Fatal(err)
	}
	defer content.Close()
	b, _ := io.ReadAll(content)
	fmt.Printf("%s: %s\n", content.ContentType, b)
	// Output:
	// att_2 request.txt 33 e76177590e06
	// text/plain: Dear vendor, please sign the DPA.
}

// LastResponse tells whether the server replayed a stored response: here the
// first answer is lost (the fake server closes the connection after creating
// the risk), the SDK retries with the same key and gets the stored risk back
// instead of creating a second one.
func ExampleAPIResponse() {
	srv := newFakeServer()
	defer srv.Close()
	srv.inject(cutAfterAnswer())
	c, _ := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL),
		// Only so that the example does not wait between attempts.
		riskapi.WithSleep(func(ctx context.Context, d time.Duration) error { return ctx.Err() }))

	r, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{
		Title:  "No DPA",
		Params: riskapi.Params{IdempotencyKey: "import-2025-01-row-17"},
	})
	if err != nil {
		log.Fatal(err)
	}
	resp := r.LastResponse
	fmt.Println(r.ID, resp.StatusCode, resp.IdempotencyKey, resp.IdempotentReplayed, resp.Attempts)
	// Output: risk_1 201 import-2025-01-row-17 true 2
}

// WithSleep makes the waits visible (and, in tests, instant); a 429 with
// Retry-After: 2 is retried after exactly two seconds.
func ExampleWithSleep() {
	srv := newFakeServer()
	defer srv.Close()
	srv.inject(status(429, "RATE_LIMITED", "2"))
	c, _ := riskapi.NewClient(testAPIKey, riskapi.WithBaseURL(srv.URL),
		riskapi.WithSleep(func(ctx context.Context, d time.Duration) error {
			fmt.Println("waiting", d)
			return ctx.Err()
		}))

	r, err := c.Risks.Create(context.Background(), &riskapi.RiskCreateParams{Title: "No DPA"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.ID, "after", r.LastResponse.Attempts, "attempts")
	// Output:
	// waiting 2s
	// risk_1 after 2 attempts
}
