package sandbox

import "strings"

// Gap is one thing a degraded backend does not cover: what it lets a plugin
// do (or keeps from one), and how to close it ("" when there is no way).
// sandbox-host probe --json has them as its "gaps" array of {"what",
// "close"} objects.
type Gap struct {
	What  string `json:"what"`
	Close string `json:"close"`
}

// Gaps are the gaps Warning names, read from its structured form (the
// SDK's sandbox_host/coverage_gaps.hpp): "<heading>; not covered: <gap>;
// <gap>", each gap "<what>" with " (close: <how>)" at its end where there is
// a way. A warning in no such form is one gap; no warning, none. A method
// rather than a field, so that Availability stays comparable with ==.
func (a Availability) Gaps() []Gap {
	if a.Warning == "" {
		return nil
	}
	items := []string{a.Warning}
	if at := strings.Index(a.Warning, "; not covered: "); at >= 0 {
		items = strings.Split(a.Warning[at+len("; not covered: "):], "; ")
	}
	var gaps []Gap
	for _, item := range items {
		gap := Gap{What: item}
		if at := strings.LastIndex(item, " (close: "); at >= 0 && strings.HasSuffix(item, ")") {
			gap = Gap{What: item[:at], Close: item[at+len(" (close: ") : len(item)-1]}
		}
		if gap.What != "" {
			gaps = append(gaps, gap)
		}
	}
	return gaps
}
