/**
 * Running a suite on each SQLite driver (src/engine/store/driver.ts): `forEachDriver` defines the
 * suite once per driver, forcing it through VOX_SQLITE_DRIVER for this process (and for child
 * processes the suite starts with `driverEnv()`), and restores the automatic choice afterwards.
 */
import { DRIVER_ENV, DRIVER_NAMES, resetDriverChoice, type DriverName } from '../../src/engine/store/driver';

let current: DriverName | undefined;

/** The environment a child process needs to use the driver the current suite runs on. */
export function driverEnv(): Record<string, string> {
  return current ? { [DRIVER_ENV]: current } : {};
}

export function forEachDriver(title: string, body: (driver: DriverName) => void): void {
  for (const driver of DRIVER_NAMES) {
    describe(`${title} [${driver}]`, function () {
      let before: string | undefined;
      this.beforeAll(() => {
        before = process.env[DRIVER_ENV];
        process.env[DRIVER_ENV] = driver;
        current = driver;
        resetDriverChoice();
      });
      this.afterAll(() => {
        if (before === undefined) delete process.env[DRIVER_ENV];
        else process.env[DRIVER_ENV] = before;
        current = undefined;
        resetDriverChoice();
      });
      body(driver);
    });
  }
}
