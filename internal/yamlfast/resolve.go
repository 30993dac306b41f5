package yamlfast

import (
	"strconv"
	"strings"
	"time"
)

// The short tags yaml.v3 puts on nodes.
const (
	tagStr       = "!!str"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagBool      = "!!bool"
	tagNull      = "!!null"
	tagTimestamp = "!!timestamp"
	tagMerge     = "!!merge"
	tagMap       = "!!map"
	tagSeq       = "!!seq"
)

// resolve returns the tag yaml.v3 gives a plain scalar. That is YAML 1.2's
// core schema with yaml.v3's own additions (timestamps, "<<", 0b and 0o
// integers, 1.1-style octals) and quirks, which matter here since the
// trees must agree, so this follows yaml.v3 rather than the spec: the
// first character picks the candidates, as in yaml.v3.
func resolve(v string) string {
	if v == "" {
		return tagNull
	}
	c := v[0]
	if !strings.ContainsRune("+-0123456789.yYnNtTfFoO~<", rune(c)) {
		return tagStr
	}
	if tag, ok := keyword(v); ok {
		return tag
	}
	switch {
	case c == '.':
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return tagFloat
		}
	case c == '+' || c == '-' || isDigit(c):
		return number(v)
	}
	return tagStr
}

// keyword resolves the scalars yaml.v3 looks up by their exact spelling.
func keyword(v string) (string, bool) {
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return tagBool, true
	case "~", "null", "Null", "NULL":
		return tagNull, true
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
		"+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return tagFloat, true
	case "<<":
		return tagMerge, true
	}
	return "", false
}

// number resolves a scalar that starts with a sign or a digit, trying what
// yaml.v3 tries in the order it does, with the same strconv calls so that
// every edge (underscores, prefixes, ranges) agrees.
func number(v string) string {
	if isTimestamp(v) {
		return tagTimestamp
	}
	plain := strings.ReplaceAll(v, "_", "")
	if isInt(plain, 0) {
		return tagInt
	}
	if floatSyntax(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return tagFloat
		}
	}
	var ok bool
	switch {
	case strings.HasPrefix(plain, "0b"):
		ok = isInt(plain[2:], 2)
	case strings.HasPrefix(plain, "-0b"):
		_, err := strconv.ParseInt("-"+plain[3:], 2, 64)
		ok = err == nil
	case strings.HasPrefix(plain, "0o"):
		ok = isInt(plain[2:], 8)
	case strings.HasPrefix(plain, "-0o"):
		_, err := strconv.ParseInt("-"+plain[3:], 8, 64)
		ok = err == nil
	}
	if ok {
		return tagInt
	}
	return tagStr
}

// isInt reports whether s fits an int64 or a uint64.
func isInt(s string, base int) bool {
	if _, err := strconv.ParseInt(s, base, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(s, base, 64)
	return err == nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits returns the offset after the run of digits starting at s[i].
func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// floatSyntax matches what yaml.v3 accepts as a float before parsing it:
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
func floatSyntax(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	switch d := digits(s, i); {
	case d > i:
		i = d
		if i < len(s) && s[i] == '.' {
			i = digits(s, i+1)
		}
	case i < len(s) && s[i] == '.':
		if i = digits(s, i+1); i == d+1 {
			return false
		}
	default:
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := digits(s, i)
		if d == i {
			return false
		}
		i = d
	}
	return i == len(s)
}

// timestampLayouts are the layouts yaml.v3 tries on scalars that start
// like a date.
var timestampLayouts = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp reports whether yaml.v3 reads v as a timestamp: four digits
// and a '-', then one of its layouts.
func isTimestamp(v string) bool {
	if len(v) < 5 || digits(v, 0) != 4 || v[4] != '-' {
		return false
	}
	for _, layout := range timestampLayouts {
		if _, err := time.Parse(layout, v); err == nil {
			return true
		}
	}
	return false
}
