package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

func TestSweepDeletesExpiredSessionsOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	login := func() {
		env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": a.Email, "password": a.Password}}).Expect(201)
	}
	login()
	login()
	env.Clock.Advance(13 * time.Hour) // both past the 12h session lifetime
	login()
	if _, err := env.App.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int64
	env.App.DB.Table("sessions").Count(&n)
	if n != 1 {
		t.Fatalf("%d session rows after the sweep, want the 1 live one", n)
	}
}
