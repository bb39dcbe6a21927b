package web

// Budgets are checked against what the browser itself measured: the
// Navigation Timing entry of the page load and the last
// largest-contentful-paint entry a PerformanceObserver reports (buffered,
// so entries before the observer was made count). A metric the browser
// did not report is not evidence, never a pass under its budget.

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
)

// Timing is what a page load measured, in milliseconds from the start
// of the navigation; a zero field was not reported.
type Timing struct {
	DOMContentLoadedMS float64 `json:"domContentLoadedMs"`
	LoadMS             float64 `json:"loadMs"`
	LCPMS              float64 `json:"lcpMs"`
	TransferBytes      float64 `json:"transferBytes"`
}

// lcpSettle is how long the page is watched for a larger paint after
// the load: LCP entries keep coming until the page is still.
const lcpSettle = 300 * time.Millisecond

var timingJS = fmt.Sprintf(`new Promise(resolve => {
  let lcp = 0;
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) lcp = Math.max(lcp, e.renderTime || e.loadTime || e.startTime);
    }).observe({type: 'largest-contentful-paint', buffered: true});
  } catch (e) {}
  const done = () => {
    const nav = performance.getEntriesByType('navigation')[0];
    let bytes = nav ? nav.transferSize : 0;
    for (const r of performance.getEntriesByType('resource')) bytes += r.transferSize || 0;
    resolve({domContentLoadedMs: nav ? nav.domContentLoadedEventEnd : 0, loadMs: nav ? nav.loadEventEnd : 0,
      lcpMs: lcp, transferBytes: bytes});
  };
  const wait = () => document.readyState === 'complete' ? setTimeout(done, %d) : setTimeout(wait, 20);
  wait();
})`, lcpSettle.Milliseconds())

func measure(ctx context.Context) (*Timing, error) {
	t, err := chromedp.Run(ctx, chromedp.Evaluate[Timing](timingJS, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("measuring the page load: %w", err)
	}
	return &t, nil
}

// budgetCheck is one budget against one measurement.
type budgetCheck struct {
	name          string
	budget, value float64
	unit          string
}

func (b *Budgets) checks(t *Timing) []budgetCheck {
	all := []budgetCheck{
		{"lcp", b.LCPMS, t.LCPMS, "ms"},
		{"domContentLoaded", b.DOMContentLoadedMS, t.DOMContentLoadedMS, "ms"},
		{"load", b.LoadMS, t.LoadMS, "ms"},
		{"transfer", b.TransferBytes, t.TransferBytes, "bytes"},
	}
	var list []budgetCheck
	for _, c := range all {
		if c.budget > 0 {
			list = append(list, c)
		}
	}
	return list
}
