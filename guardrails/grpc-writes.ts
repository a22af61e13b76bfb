/**
 * Which gRPC methods are writes. Every gRPC call is an HTTP POST, so the
 * method rule of HTTP would call them all writes; instead a method is a write
 * when it matches the dependency's `grpc.writeMethods`, a read when it matches
 * `grpc.readMethods` or its descriptor declares `idempotency_level =
 * NO_SIDE_EFFECTS`, and a write otherwise — what is not known to be safe is
 * treated as unsafe, as an unknown HTTP method is.
 */
import picomatch from 'picomatch';
import { type DependencyConfig } from '../core/index.js';
import { loadGrpcSchema, type GrpcSchema } from '../net/index.js';

interface Rules {
  readonly write: (name: string) => boolean;
  readonly read: (name: string) => boolean;
  readonly schema?: GrpcSchema;
}

const never = (): boolean => false;

export class GrpcWriteRules {
  readonly #rules = new Map<string, Rules>();

  /** `schemas`: each dependency's descriptors, when its config names a descriptor set (loaded by the caller). */
  constructor(dependencies: readonly DependencyConfig[], schemas: ReadonlyMap<string, GrpcSchema> = new Map()) {
    for (const dependency of dependencies) {
      const grpc = dependency.grpc;
      const schema = schemas.get(dependency.name);
      this.#rules.set(dependency.name, {
        write: grpc && grpc.writeMethods.length > 0 ? picomatch(grpc.writeMethods) : never,
        read: grpc && grpc.readMethods.length > 0 ? picomatch(grpc.readMethods) : never,
        ...(schema ? { schema } : {}),
      });
    }
  }

  isWrite(dependency: Pick<DependencyConfig, 'name'>, service: string, method: string): boolean {
    const rules = this.#rules.get(dependency.name);
    if (!rules) return true;
    const name = `${service}/${method}`;
    if (rules.write(name)) return true;
    if (rules.read(name)) return false;
    return rules.schema?.sideEffectFree(service, method) !== true;
  }
}

/** The descriptor sets dependencies name, loaded relative to `cwd`; a set that does not parse is a config error naming its dependency. */
export async function loadDependencySchemas(dependencies: readonly DependencyConfig[], cwd: string): Promise<Map<string, GrpcSchema>> {
  const schemas = new Map<string, GrpcSchema>();
  for (const [index, dependency] of dependencies.entries()) {
    const set = dependency.grpc?.descriptorSet;
    if (set !== undefined) schemas.set(dependency.name, await loadGrpcSchema({ descriptorSet: set }, cwd, `dependencies[${index}].grpc`));
  }
  return schemas;
}
