package riskstore

// DenseMatches is denseMatches, for the test of the walk it chooses.
const DenseMatches = denseMatches
