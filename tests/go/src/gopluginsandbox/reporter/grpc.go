package reporter

import (
	"context"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// GRPCPlugin serves and dispenses a Reporter over go-plugin's gRPC protocol,
// with a service written by hand instead of by protoc: its messages are
// protobuf's well-known wrapper types.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Reporter
}

func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, server *grpc.Server) error {
	server.RegisterService(&serviceDesc, &grpcServer{p.Impl})
	return nil
}

func (*GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (interface{}, error) {
	return &grpcClient{conn}, nil
}

const serviceName = "sandboxhost.test.Reporter"

// reporterService is the service's handler type, as protoc would declare it.
type reporterService interface {
	Read(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
	Getenv(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*reporterService)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Read", Handler: unaryHandler(reporterService.Read)},
		{MethodName: "Getenv", Handler: unaryHandler(reporterService.Getenv)},
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "reporter.proto",
}

type unaryMethod func(reporterService, context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)

func unaryHandler(method unaryMethod) func(interface{}, context.Context, func(interface{}) error, grpc.UnaryServerInterceptor) (interface{}, error) {
	return func(srv interface{}, ctx context.Context, decode func(interface{}) error, _ grpc.UnaryServerInterceptor) (interface{}, error) {
		in := new(wrapperspb.StringValue)
		if err := decode(in); err != nil {
			return nil, err
		}
		return method(srv.(reporterService), ctx, in)
	}
}

type grpcServer struct{ impl Reporter }

func (s *grpcServer) Read(_ context.Context, path *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	contents, err := s.impl.Read(path.GetValue())
	if err != nil {
		return nil, status.Error(codes.PermissionDenied, err.Error())
	}
	return wrapperspb.String(contents), nil
}

func (s *grpcServer) Getenv(_ context.Context, name *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	value, set, err := s.impl.Getenv(name.GetValue())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if !set {
		return nil, status.Error(codes.NotFound, name.GetValue()+" is not set")
	}
	return wrapperspb.String(value), nil
}

type grpcClient struct{ conn *grpc.ClientConn }

func (c *grpcClient) call(method, in string) (string, error) {
	out := new(wrapperspb.StringValue)
	err := c.conn.Invoke(context.Background(), "/"+serviceName+"/"+method, wrapperspb.String(in), out)
	return out.GetValue(), err
}

func (c *grpcClient) Read(path string) (string, error) {
	return c.call("Read", path)
}

func (c *grpcClient) Getenv(name string) (string, bool, error) {
	value, err := c.call("Getenv", name)
	if status.Code(err) == codes.NotFound {
		return "", false, nil
	}
	return value, err == nil, err
}
