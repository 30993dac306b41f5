package lint

// routeAnalyzers check VirtualServices and routes (MC5xxx).
var routeAnalyzers = []*Analyzer{}
