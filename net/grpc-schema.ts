/**
 * The descriptors gRPC responses are decoded with, from a FileDescriptorSet
 * or `.proto` files named in the config. protobufjs reads both (its
 * `ext/descriptor` turns a descriptor set into the same reflection tree its
 * parser makes from `.proto` text), so a team can point Tandem at what its
 * build already produces, or at its sources when there is no build step.
 * @bufbuild/protobuf reads descriptor sets but compiles no `.proto` text.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import protobuf from 'protobufjs';
// For its effect: it adds Root.fromDescriptor and Root#toDescriptor, which read and write a serialized FileDescriptorSet.
import 'protobufjs/ext/descriptor.js';
import { ConfigError } from '../core/index.js';
import type { WorkloadConfig } from '../core/index.js';

export type GrpcSchemaConfig = NonNullable<NonNullable<WorkloadConfig['harness']['responses']>['grpc']>;

/** Request and response types by method (`package.Service/Method`). */
export interface GrpcSchema {
  requestType(service: string, method: string): protobuf.Type | undefined;
  responseType(service: string, method: string): protobuf.Type | undefined;
  /** Whether a method is declared free of side effects (`idempotency_level = NO_SIDE_EFFECTS`); undefined when unknown. */
  sideEffectFree(service: string, method: string): boolean | undefined;
}

export function grpcSchemaOf(root: protobuf.Root): GrpcSchema {
  const methodOf = (service: string, method: string): protobuf.Method | undefined => {
    let found: protobuf.ReflectionObject | null;
    try {
      found = root.lookup(service);
    } catch {
      return undefined;
    }
    return found instanceof protobuf.Service ? found.methods[method] : undefined;
  };
  const typeOf = (service: string, method: string, direction: 'request' | 'response'): protobuf.Type | undefined => {
    const m = methodOf(service, method);
    if (!m) return undefined;
    try {
      m.resolve();
      return (direction === 'request' ? m.resolvedRequestType : m.resolvedResponseType) ?? undefined;
    } catch {
      return undefined;
    }
  };
  return {
    requestType: (service, method) => typeOf(service, method, 'request'),
    responseType: (service, method) => typeOf(service, method, 'response'),
    sideEffectFree(service, method) {
      const m = methodOf(service, method);
      if (!m) return undefined;
      const level = m.options?.['idempotency_level'] ?? m.parsedOptions?.find((o) => 'idempotency_level' in o)?.['idempotency_level'];
      return level === 'NO_SIDE_EFFECTS' || level === 1;
    },
  };
}

/** A serialized FileDescriptorSet as a schema; a set that does not parse is a config error naming the file. */
export function schemaFromDescriptorSet(bytes: Uint8Array, file: string, where = 'descriptorSet'): GrpcSchema {
  try {
    const root = protobuf.Root.fromDescriptor(bytes);
    if (root.nestedArray.length === 0) throw new Error('it declares nothing');
    root.resolveAll();
    return grpcSchemaOf(root);
  } catch (error) {
    throw new ConfigError([
      `${where}: ${file} is not a FileDescriptorSet protobufjs can read (${(error as Error).message.slice(0, 200)}); make one with protoc --include_imports --descriptor_set_out, or buf build -o`,
    ]);
  }
}

/** Loads what the config names, relative to `cwd`. */
export async function loadGrpcSchema(config: GrpcSchemaConfig, cwd: string, where = 'harness.responses.grpc'): Promise<GrpcSchema> {
  const loaded = await loadDescriptors(config, cwd, where);
  return 'bytes' in loaded ? schemaFromDescriptorSet(loaded.bytes, loaded.file, `${where}.descriptorSet`) : grpcSchemaOf(loaded.root);
}

/**
 * What the config names as one serialized FileDescriptorSet, checked: what a worker thread makes its own schema
 * from (schemaFromDescriptorSet), since a protobufjs tree does not cross threads. `.proto` files are written out
 * as the set protobufjs read from them.
 */
export async function loadDescriptorSet(config: GrpcSchemaConfig, cwd: string, where: string): Promise<Uint8Array> {
  const loaded = await loadDescriptors(config, cwd, where);
  if ('bytes' in loaded) {
    schemaFromDescriptorSet(loaded.bytes, loaded.file, `${where}.descriptorSet`);
    return loaded.bytes;
  }
  const set = loaded.root.toDescriptor('proto3');
  return set.$type.encode(set).finish();
}

async function loadDescriptors(config: GrpcSchemaConfig, cwd: string, where: string): Promise<{ bytes: Uint8Array; file: string } | { root: protobuf.Root }> {
  if (config.descriptorSet !== undefined) {
    const file = resolve(cwd, config.descriptorSet);
    try {
      return { bytes: await readFile(file), file };
    } catch (error) {
      throw new ConfigError([`${where}.descriptorSet: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`]);
    }
  }
  const files = (config.protoFiles ?? []).map((f) => resolve(cwd, f));
  if (files.length === 0) throw new ConfigError([`${where}: name a descriptorSet or protoFiles`]);
  try {
    const root = new protobuf.Root();
    await root.load(files, { keepCase: true });
    root.resolveAll();
    return { root };
  } catch (error) {
    throw new ConfigError([`${where}.protoFiles: cannot load ${files.join(', ')}: ${(error as Error).message.slice(0, 300)}`]);
  }
}
