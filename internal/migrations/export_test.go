package migrations

// RollbackRiskRegister undoes 0011 so a test can start from the schema before it.
var RollbackRiskRegister = m0013RiskRegister.Rollback
