package consumer

import (
	"encoding/json"

	"github.com/ledger-dev/ledger/internal/store"
)

// Namespace is the CloudWatch namespace of the consumer's metrics.
const Namespace = "Ledger"

// The metric names, one counter per outcome plus the retries: MetricRetries sums the
// transactions each message took beyond its first (a version conflict, or a
// cancellation for a concurrent transaction or throttling on an item; not the SDK's own
// retries of a request). MetricFailedPermanent counts the failures among MetricFailed
// that can never succeed: each is parked, and one is reason enough to alarm.
const (
	MetricApplied              = "Applied"
	MetricDuplicate            = "Duplicate"
	MetricConflictingDuplicate = "ConflictingDuplicate"
	MetricRejected             = "Rejected"
	MetricFailed               = "Failed"
	MetricFailedPermanent      = "FailedPermanent"
	MetricRetries              = "VersionConflictRetries"
)

var metricNames = []string{MetricApplied, MetricDuplicate, MetricConflictingDuplicate, MetricRejected, MetricFailed, MetricFailedPermanent, MetricRetries}

// metricOf is the counter of each outcome; anything else counts as failed.
var metricOf = map[store.Outcome]string{store.Applied: MetricApplied, store.Duplicate: MetricDuplicate,
	store.ConflictingDuplicate: MetricConflictingDuplicate, store.Rejected: MetricRejected, store.Failed: MetricFailed, "": MetricFailed}

// emit writes one Embedded Metric Format document for the batch, which CloudWatch Logs
// turns into metrics without an API call.
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
func (h *Handler) emit(recs []Record) {
	if h.opts.Metrics == nil {
		return
	}
	counts := map[string]int{}
	for _, r := range recs {
		counts[metricOf[r.Result.Outcome]]++ // every kind of failure counts as Failed
		if r.Result.Outcome == store.Failed && permanent(r.Result) {
			counts[MetricFailedPermanent]++
		}
		counts[MetricRetries] += max(r.Result.Attempts-1, 0)
	}
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
