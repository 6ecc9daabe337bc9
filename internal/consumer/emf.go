package consumer

import "encoding/json"

// Namespace is the CloudWatch namespace of the consumer's metrics.
const Namespace = "Ledger"

// The metric names, one counter per outcome plus the retries: MetricRetries sums the
// transactions each message took beyond its first (a version conflict, or a
// cancellation for a concurrent transaction or throttling on an item; not the SDK's own
// retries of a request).
const (
	MetricApplied              = "Applied"
	MetricDuplicate            = "Duplicate"
	MetricConflictingDuplicate = "ConflictingDuplicate"
	MetricRejected             = "Rejected"
	MetricFailed               = "Failed"
	MetricRetries              = "VersionConflictRetries"
)

var metricNames = []string{MetricApplied, MetricDuplicate, MetricConflictingDuplicate, MetricRejected, MetricFailed, MetricRetries}

// emit writes one Embedded Metric Format document for the batch, which CloudWatch Logs
// turns into metrics without an API call.
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
func (h *Handler) emit(recs []Record) {
	if h.opts.Metrics == nil {
		return
	}
	var o Outcomes
	retries := 0
	for _, r := range recs {
		o.add(r.Result.Outcome)
		retries += max(r.Result.Attempts-1, 0)
	}
	counts := map[string]int{MetricApplied: o.Applied, MetricDuplicate: o.Duplicate, MetricConflictingDuplicate: o.ConflictingDuplicate,
		MetricRejected: o.Rejected, MetricFailed: o.Failed, MetricRetries: retries}
	defs := make([]map[string]string, len(metricNames))
	doc := map[string]any{"Strategy": string(h.opts.Strategy)}
	dims := [][]string{{"Strategy"}}
	if h.opts.Function != "" {
		doc["Function"] = h.opts.Function
		dims = append(dims, []string{"Strategy", "Function"})
	}
	for i, name := range metricNames {
		defs[i] = map[string]string{"Name": name, "Unit": "Count"}
		doc[name] = counts[name]
	}
	doc["_aws"] = map[string]any{
		"Timestamp": h.opts.Now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  Namespace,
			"Dimensions": dims,
			"Metrics":    defs,
		}},
	}
	line, _ := json.Marshal(doc) // cannot fail: the document is made of maps, strings and integers
	_, _ = h.opts.Metrics.Write(append(line, '\n'))
}
