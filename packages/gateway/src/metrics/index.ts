export { decisionLabel, GatewayMetrics, LIMITS, type MetricsSources } from './gateway-metrics.js';
export { labelValue, MAX_LABEL_CHARS, OTHER } from './labels.js';
export { type MetricsListener, metricsAddress, serveMetrics } from './server.js';
