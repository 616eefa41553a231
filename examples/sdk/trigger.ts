// Triggers a run with the SDK: `npm run demo`, then in another terminal `source .ars-demo/demo.env` and
// `npx tsx examples/sdk/trigger.ts` (tsx follows tsconfig.json's paths to the SDK's sources: no build needed).
import { AgentRunClient } from '@agent-run-service/sdk';

const ars = new AgentRunClient({ baseUrl: process.env.BASE!, ingestKey: process.env.LEAD_KEY!, agentId: Number(process.env.LEAD_AGENT) });
const result = await ars.triggerAndWait({ company: 'Initech' });
if (result.kind === 'completed') console.log(result.run.status, result.run.output_data);
else console.log(`run ${result.runId} is still ${result.status}`);
