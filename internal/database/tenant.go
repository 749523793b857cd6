package database

import "gorm.io/gorm"

// OfTenant is the GORM scope of one tenant's rows (every table of tenant data has a
// tenant_id column), for Scopes. Each domain store applies it in one place, its
// tenant method, so no statement on tenant data can forget it.
func OfTenant(tenantID string) func(*gorm.DB) *gorm.DB {
	return func(q *gorm.DB) *gorm.DB { return q.Where("tenant_id = ?", tenantID) }
}
