export { AGENT_NAME, AGENT_SCOPE, AgentError, type AgentRecord, AgentStore } from './store.js';
