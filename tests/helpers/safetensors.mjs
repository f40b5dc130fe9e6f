// Writing safetensors files in tests (the library only reads them): the scripts' writer.
export { encodeSafetensors } from '../../scripts/safetensors-write.mjs';
