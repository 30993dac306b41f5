package diag

// validationEntries: MC1008 and istiod's admission validation.
var validationEntries = []*Entry{}
