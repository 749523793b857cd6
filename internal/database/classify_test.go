package database_test

import (
	"errors"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

type probe struct {
	ID        int
	CheckedAt time.Time
}

func (probe) TableName() string { return "readiness_probes" }

// TestEveryGORMStatementIsClassified: a store sends a statement through GORM and
// gets its failure back classified (503 STORE_UNAVAILABLE at the edge) without
// calling Classify itself, whatever kind of statement it was; a refused statement
// (a duplicate key) stays what it was.
func TestEveryGORMStatementIsClassified(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	now := time.Now().UTC()
	if err := db.Create(&probe{ID: 1, CheckedAt: now}).Error; err == nil || errors.Is(err, database.ErrUnavailable) {
		t.Fatalf("duplicate key: err = %v, want a refusal that is not ErrUnavailable", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	statements := map[string]func() error{
		"create": func() error { return db.Create(&probe{ID: 2, CheckedAt: now}).Error },
		"query":  func() error { return db.Find(&[]probe{}).Error },
		"take":   func() error { return db.Where("id = ?", 1).Take(&probe{}).Error },
		"update": func() error { return db.Model(&probe{}).Where("id = ?", 1).Update("checked_at", now).Error },
		"delete": func() error { return db.Where("id = ?", 2).Delete(&probe{}).Error },
		"exec":   func() error { return db.Exec("UPDATE readiness_probes SET checked_at = ?", now).Error },
		"rows": func() error {
			rows, err := db.Raw("SELECT id FROM readiness_probes").Rows()
			if err == nil {
				rows.Close()
			}
			return err
		},
	}
	for name, run := range statements {
		if err := run(); !errors.Is(err, database.ErrUnavailable) {
			t.Errorf("%s on a closed pool: err = %v, want ErrUnavailable", name, err)
		}
	}
}
