import { randomUUID } from 'node:crypto';
import { inject, onTestFinished } from 'vitest';
import { createClickHouseStore } from '../../store/index.js';
import { dashboardContract } from './dashboard-contract.js';

dashboardContract('ClickHouse', async () => {
  const store = createClickHouseStore({ url: inject('clickhouseUrl'), database: `tandem_test_${randomUUID().replaceAll('-', '')}` });
  await store.init();
  onTestFinished(() => store.close());
  return store;
});
