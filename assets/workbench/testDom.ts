// A browser's DOM for the unit tests that draw parts of the workbench in Node
// (happy-dom): importing this module puts window, document and the DOM's
// classes on globalThis. Import it before the modules under test. Test
// support only: no bundle imports it.
import { GlobalRegistrator } from '@happy-dom/global-registrator';

if (!GlobalRegistrator.isRegistered) GlobalRegistrator.register({ url: 'http://box1.test:8080/', width: 1280, height: 800 });
