package console

import "strconv"

// The sign-in chart's geometry, in SVG user units.
const (
	chartWidth   = 700
	chartHeight  = 200
	chartBottom  = 180 // the baseline; the labels go under it
	chartBarArea = 170 // the tallest bar
)

// chartBar is one bar of the chart.
type chartBar struct {
	X, Y, W, H string
	Class      string
}

// chartBars lays out two bars a day, sign-ins and failures, scaled to the
// busiest day.
func chartBars(days []Day) []chartBar {
	top := 1
	for _, d := range days {
		top = max(top, d.SignIns, d.Failures)
	}
	slot := chartWidth / max(len(days), 1)
	w := max(slot/2-4, 2)
	var out []chartBar
	for i, d := range days {
		for j, v := range []int{d.SignIns, d.Failures} {
			h := v * chartBarArea / top
			class := "bar-signin"
			if j == 1 {
				class = "bar-failure"
			}
			out = append(out, chartBar{X: strconv.Itoa(i*slot + 2 + j*(w+2)), Y: strconv.Itoa(chartBottom - h),
				W: strconv.Itoa(w), H: strconv.Itoa(h), Class: class})
		}
	}
	return out
}

// chartLabelX is where a day's label goes.
func chartLabelX(days []Day, i int) string {
	slot := chartWidth / max(len(days), 1)
	return strconv.Itoa(i*slot + slot/2)
}

// shortDate is a day's label: month and day.
func shortDate(date string) string {
	if len(date) == 10 {
		return date[5:]
	}
	return date
}

func totals(days []Day) (signIns, failures int) {
	for _, d := range days {
		signIns += d.SignIns
		failures += d.Failures
	}
	return signIns, failures
}
