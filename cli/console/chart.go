package console

import (
	"fmt"
	"slices"
	"strings"
	"time"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// chart is compliance over time as SVG geometry: how many (policy,
// cluster) cells were Compliant and NonCompliant, rebuilt from the
// compliance history the agents report (the newest ten messages per
// template).
type chart struct {
	Width, Height int
	// Compliant and NonCompliant are SVG polyline points.
	Compliant, NonCompliant string
	Max                     int
	Start, End              time.Time
	// Summary says the same in words, for those who do not see the chart.
	Summary string
}

const (
	chartWidth   = 640
	chartHeight  = 160
	chartSamples = 64
	// chartWindow is the longest span shown.
	chartWindow = 24 * time.Hour
)

// stateChange is a policy's compliance on a cluster from a time on.
type stateChange struct {
	at    time.Time
	state string
}

func complianceChart(replicated []*policyv1.Policy, now time.Time) *chart {
	var series [][]stateChange
	start := now
	for _, p := range replicated {
		s := policyChanges(p)
		if len(s) == 0 {
			continue
		}
		series = append(series, s)
		if s[0].at.Before(start) {
			start = s[0].at
		}
	}
	if len(series) == 0 {
		return nil
	}
	if now.Sub(start) > chartWindow {
		start = now.Add(-chartWindow)
	}
	if now.Sub(start) < time.Minute {
		start = now.Add(-time.Minute)
	}
	c := &chart{Width: chartWidth, Height: chartHeight, Start: start, End: now}
	ok := make([]int, chartSamples)
	bad := make([]int, chartSamples)
	step := now.Sub(start) / (chartSamples - 1)
	for i := range chartSamples {
		t := start.Add(time.Duration(i) * step)
		for _, s := range series {
			switch stateAt(s, t) {
			case string(policyv1.Compliant):
				ok[i]++
			case string(policyv1.NonCompliant):
				bad[i]++
			}
		}
		c.Max = max(c.Max, ok[i], bad[i])
	}
	c.Max = max(c.Max, 1)
	c.Compliant, c.NonCompliant = polyline(ok, c.Max), polyline(bad, c.Max)
	c.Summary = fmt.Sprintf("From %s to now: Compliant %d → %d, NonCompliant %d → %d.",
		start.UTC().Format("15:04:05Z"), ok[0], ok[chartSamples-1], bad[0], bad[chartSamples-1])
	return c
}

func polyline(v []int, top int) string {
	var b strings.Builder
	for i, n := range v {
		x := i * chartWidth / (len(v) - 1)
		y := chartHeight - n*chartHeight/top
		fmt.Fprintf(&b, "%d,%d ", x, y)
	}
	return strings.TrimSpace(b.String())
}

// policyChanges are the changes of a replicated policy's compliance,
// oldest first: at each message of any template, the policy is
// NonCompliant if some template's latest message says so, else Compliant
// once every template has said so.
func policyChanges(p *policyv1.Policy) []stateChange {
	type msg struct {
		at       time.Time
		template int
		state    string
	}
	var msgs []msg
	for i, d := range p.Status.Details {
		for _, h := range d.History {
			msgs = append(msgs, msg{h.LastTimestamp.Time, i, messageState(h.Message)})
		}
	}
	slices.SortStableFunc(msgs, func(a, b msg) int { return a.at.Compare(b.at) })
	latest := make([]string, len(p.Status.Details))
	var out []stateChange
	for _, m := range msgs {
		latest[m.template] = m.state
		st := string(policyv1.Compliant)
		for _, l := range latest {
			switch l {
			case string(policyv1.NonCompliant):
				st = l
			case "", string(policyv1.Pending):
				if st != string(policyv1.NonCompliant) {
					st = string(policyv1.Pending)
				}
			}
		}
		out = append(out, stateChange{m.at, st})
	}
	return out
}

func messageState(m string) string {
	for _, s := range []policyv1.ComplianceState{policyv1.NonCompliant, policyv1.Compliant, policyv1.Pending} {
		if strings.HasPrefix(m, string(s)) {
			return string(s)
		}
	}
	return ""
}

// stateAt is the state of a series at t; "" before its first change.
func stateAt(s []stateChange, t time.Time) string {
	st := ""
	for _, c := range s {
		if c.at.After(t) {
			break
		}
		st = c.state
	}
	return st
}
