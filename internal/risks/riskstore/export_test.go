package riskstore

// DenseMatches is denseMatches, for the test of the walk it chooses.
const DenseMatches = denseMatches

// Countable is countable: whether a heat map of q reads the counts.
var Countable = countable
