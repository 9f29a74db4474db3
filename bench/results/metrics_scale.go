package results

// ScaleMetrics declares the scale scenario's figures, in the order a
// report shows them.
var ScaleMetrics = scaleMetrics{
	SessionsReached:            MetricSpec{Name: "sessions_reached", Unit: "count", Better: BetterHigher, Label: "sessions held", Kind: KindCount, Key: true},
	Sessions:                   MetricSpec{Name: "sessions", Unit: "count", Label: "sessions opened", Kind: KindParameter},
	ServerBytesPerSession:      MetricSpec{Name: "server_bytes_per_session", Unit: "bytes", Better: BetterLower, Label: "server memory per session", Kind: KindBytes, Key: true},
	ServerTotalBytesPerSession: MetricSpec{Name: "server_total_bytes_per_session", Unit: "bytes", Label: "server memory per session, whole process", Kind: KindBytes},
	ServerBytesPerSessionSlope: MetricSpec{Name: "server_bytes_per_session_slope", Unit: "bytes", Label: "server memory per session, slope while opening", Kind: KindBytes},
	ServerBytesSlopeR2:         MetricSpec{Name: "server_bytes_slope_r2", Unit: "ratio", Label: "R² of the memory slope", Kind: KindRatio},
	ClientBytesPerLock:         MetricSpec{Name: "client_bytes_per_lock", Unit: "bytes", Better: BetterLower, Label: "client memory per lock", Kind: KindBytes},
	ServerCPUMsPerSec:          MetricSpec{Name: "server_cpu_ms_per_sec", Unit: "ms/s", Better: BetterLower, Label: "coordinator CPU", Kind: KindCPU, Key: true},
	BenchCPUMsPerSec:           MetricSpec{Name: "bench_cpu_ms_per_sec", Unit: "ms/s", Better: BetterLower, Label: "bench CPU", Kind: KindCPU},
	ServerOpsPerSec:            MetricSpec{Name: "server_ops_per_sec", Unit: "1/s", Better: BetterLower, Label: "coordinator commands/s", Kind: KindRate},
	HeartbeatsPerSec:           MetricSpec{Name: "heartbeats_per_sec", Unit: "1/s", Better: BetterLower, Label: "keep-alives/s", Kind: KindRate},
	ServerCPUUsPerHeartbeat:    MetricSpec{Name: "server_cpu_us_per_heartbeat", Unit: "us", Label: "coordinator CPU per keep-alive", Kind: KindCPU},
	ClientCPUUsPerHeartbeat:    MetricSpec{Name: "client_cpu_us_per_heartbeat", Unit: "us", Label: "bench CPU per keep-alive", Kind: KindCPU},
	OpenSeconds:                MetricSpec{Name: "open_seconds", Unit: "s", Label: "time to open the sessions", Kind: KindParameter},
	Depth:                      MetricSpec{Name: "depth", Unit: "count", Label: "waiters queued", Kind: KindParameter},
	QueueFillMs:                MetricSpec{Name: "queue_fill_ms", Unit: "ms", Better: BetterLower, Label: "time until all waiters were queued", Kind: KindLatency},
	WaitingOpsPerSec:           MetricSpec{Name: "waiting_ops_per_sec", Unit: "1/s", Better: BetterLower, Label: "coordinator commands/s of the waiting", Kind: KindRate, Key: true},
	WaiterTriesPerLease:        MetricSpec{Name: "waiter_tries_per_lease", Unit: "count", Better: BetterLower, Label: "acquire tries per waiter per lease while the lock stays held", Kind: KindCount},
	PromotionP50:               MetricSpec{Name: "promotion_p50", Unit: "us", Better: BetterLower, Label: "promotion p50", Kind: KindLatency, Key: true},
	PromotionP99:               MetricSpec{Name: "promotion_p99", Unit: "us", Better: BetterLower, Label: "promotion p99", Kind: KindLatency},
	Promotions:                 MetricSpec{Name: "promotions", Unit: "count", Label: "promotions sampled", Kind: KindCount},
	Saturated:                  MetricSpec{Name: "saturated", Unit: "count", Label: "coordinator saturated (1 = yes)", Kind: KindVerdict},
	GrantsPerSec:               MetricSpec{Name: "grants_per_sec", Unit: "1/s", Better: BetterHigher, Label: "grants per second", Kind: KindRate},
	WaitP50:                    MetricSpec{Name: "wait_p50", Unit: "ms", Better: BetterLower, Label: "wait p50", Kind: KindLatency},
	WaitP99:                    MetricSpec{Name: "wait_p99", Unit: "ms", Better: BetterLower, Label: "wait p99", Kind: KindLatency},
	ServerCPUMsPer1k:           MetricSpec{Name: "server_cpu_ms_per_1k", Unit: "ms", Better: BetterLower, Label: "coordinator CPU per 1,000 locks", Kind: KindCPU},
	Failures:                   MetricSpec{Name: "failures", Unit: "count", Better: BetterLower, Label: "failed cycles", Kind: KindCount},
	Workers:                    MetricSpec{Name: "workers", Unit: "count", Label: "worker processes that made the load", Kind: KindParameter},
	WorkerHosts:                MetricSpec{Name: "worker_hosts", Unit: "count", Label: "hosts the workers ran on", Kind: KindParameter},
	OpenAcquireP50:             MetricSpec{Name: "open_acquire_p50", Unit: "us", Better: BetterLower, Label: "acquire p50 while the sessions opened", Kind: KindLatency},
	OpenAcquireP99:             MetricSpec{Name: "open_acquire_p99", Unit: "us", Better: BetterLower, Label: "acquire p99 while the sessions opened", Kind: KindLatency},
}

type scaleMetrics struct {
	SessionsReached            MetricSpec
	Sessions                   MetricSpec
	ServerBytesPerSession      MetricSpec
	ServerTotalBytesPerSession MetricSpec
	ServerBytesPerSessionSlope MetricSpec
	ServerBytesSlopeR2         MetricSpec
	ClientBytesPerLock         MetricSpec
	ServerCPUMsPerSec          MetricSpec
	BenchCPUMsPerSec           MetricSpec
	ServerOpsPerSec            MetricSpec
	HeartbeatsPerSec           MetricSpec
	ServerCPUUsPerHeartbeat    MetricSpec
	ClientCPUUsPerHeartbeat    MetricSpec
	OpenSeconds                MetricSpec
	Depth                      MetricSpec
	QueueFillMs                MetricSpec
	WaitingOpsPerSec           MetricSpec
	WaiterTriesPerLease        MetricSpec
	PromotionP50               MetricSpec
	PromotionP99               MetricSpec
	Promotions                 MetricSpec
	Saturated                  MetricSpec
	GrantsPerSec               MetricSpec
	WaitP50                    MetricSpec
	WaitP99                    MetricSpec
	ServerCPUMsPer1k           MetricSpec
	Failures                   MetricSpec
	Workers                    MetricSpec
	WorkerHosts                MetricSpec
	OpenAcquireP50             MetricSpec
	OpenAcquireP99             MetricSpec
}

// List returns the scale scenario's metrics in declaration order.
func (m scaleMetrics) List() []MetricSpec { return specsOf(m) }
