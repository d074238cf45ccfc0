// The ODRL policy the auth benchmarks give the dsec plugin: an action on entities of one type, for any party.

export const typePolicy = (uid: string, action: string, type: string): Record<string, unknown> => ({
  '@context': { odrl: 'http://www.w3.org/ns/odrl/2/' },
  '@type': 'odrl:Policy',
  'odrl:uid': uid,
  'odrl:permission': {
    '@type': 'odrl:Permission',
    'odrl:action': { '@id': action },
    'odrl:assignee': { '@id': 'vc:any' },
    'odrl:target': {
      '@type': 'odrl:AssetCollection',
      'odrl:source': 'urn:asset',
      'odrl:refinement': {
        '@type': 'odrl:Constraint',
        'odrl:leftOperand': 'ngsi-ld:entityType',
        'odrl:operator': { '@id': 'odrl:eq' },
        'odrl:rightOperand': type,
      },
    },
  },
});
