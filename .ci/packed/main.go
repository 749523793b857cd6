// The Go SDK's flow from a scratch module outside the repository (.ci/packed-sdks):
// create a risk, find it in the list, update it with If-Match, and see a stale
// If-Match refused with 412.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	riskapi "github.com/riskapi/riskapi/sdk"
)

func main() {
	ctx := context.Background()
	c, err := riskapi.NewClient(os.Getenv("RISKAPI_KEY"), riskapi.WithBaseURL(os.Getenv("RISKAPI_URL")))
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.Risks.Create(ctx, &riskapi.RiskCreateParams{Title: "go packed flow", Likelihood: riskapi.Ptr(3), Impact: riskapi.Ptr(4)})
	if err != nil {
		log.Fatalf("create: %v", err)
	}
	found := false
	for risk, err := range c.Risks.List(ctx, nil) {
		if err != nil {
			log.Fatalf("list: %v", err)
		}
		found = found || risk.ID == r.ID
	}
	if !found {
		log.Fatalf("list: %s missing", r.ID)
	}
	up := &riskapi.RiskUpdateParams{Impact: riskapi.Ptr(5)}
	up.IfMatch = r.ETag()
	u, err := c.Risks.Update(ctx, r.ID, up)
	if err != nil || u.Version != r.Version+1 || u.RiskScore == nil || *u.RiskScore != 15 {
		log.Fatalf("update with If-Match: %+v %v", u, err)
	}
	stale := &riskapi.RiskUpdateParams{Impact: riskapi.Ptr(1)}
	stale.IfMatch = r.ETag()
	var apiErr *riskapi.Error
	if _, err := c.Risks.Update(ctx, r.ID, stale); !errors.As(err, &apiErr) || apiErr.Status != 412 {
		log.Fatalf("stale If-Match: want 412, got %v", err)
	}
	fmt.Println("go flow ok", r.ID)
}
