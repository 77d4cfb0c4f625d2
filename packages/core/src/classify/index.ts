export {
  BUILTIN_CLASSIFICATIONS,
  CATEGORY_DEFAULT_RISK,
  DEFAULT_CLASSIFICATION,
  findBuiltinClassification,
  type BuiltinClassification,
} from "./builtin-table.js";
export {
  classifyAction,
  classifyDerived,
  classifyDerivedWithCompiled,
  classifyGuarded,
  classifyGuardedWithCompiled,
  classifyWithCompiled,
  higherRisk,
  compileClassificationOverrides,
  type Classification,
  type ClassificationSource,
  type CompiledOverrides,
} from "./classify-action.js";
