package migrations

// RollbackRiskRegister undoes 0011 so a test can start from the schema before it.
var RollbackRiskRegister = m0013RiskRegister.Rollback

// RollbackRegisterHeatmap undoes 0015, whose index names columns 0013 adds.
var RollbackRegisterHeatmap = m0015RegisterHeatmap.Rollback

// RollbackHeatCounts undoes 0016, whose triggers name columns 0013 adds.
var RollbackHeatCounts = m0016HeatCounts.Rollback

// RollbackSearchPerTenant undoes 0017, whose triggers name risks' text columns.
var RollbackSearchPerTenant = m0017SearchPerTenant.Rollback

// RollbackRegisterInTime undoes 0021, whose index names 0013's review_date.
var RollbackRegisterInTime = m0021RegisterInTime.Rollback

// RollbackResidualSortHistory undoes 0030, whose index names 0013's residual_score.
var RollbackResidualSortHistory = m0030ResidualSortHistory.Rollback
