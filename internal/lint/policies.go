package lint

// policyAnalyzers check policies and Istio metadata (MC9xxx).
var policyAnalyzers = []*Analyzer{}
