/**
 * Shapes shared across the gateway: protocol families, providers, policies. They are defined in
 * `src/store/schema.ts` (below both the state store and the daemon) and re-exported here.
 */
export * from '../store/schema.js'
